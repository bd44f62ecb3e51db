import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { type BranchRecord, getBranch, listBranches, MAIN } from "../../../shared/branches/branches.ts";
import { listCheckRuns } from "../../../shared/checks/checks.ts";
import { listComments } from "../../../shared/comments/comments.ts";
import { diffBranch } from "../../../shared/commits/diff.ts";
import type { AppContext } from "../../../shared/context.ts";
import { type BranchStatusReport, branchStatus } from "../../../shared/merge/status.ts";
import type { PolicyResult } from "../../../shared/policy/engine.ts";
import { getProposal, listProposals, type ProposalRecord } from "../../../shared/proposals/proposals.ts";
import { authoredOnBranch, listReviews, type ReviewStatus } from "../../../shared/reviews/reviews.ts";
import { Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { createBranchForm } from "./create.ts";
import { type DiffLayout, type FileChange, renderChanges } from "./diff.ts";
import {
  closeProposalForm,
  editProposalForm,
  mayChangeProposal,
  mayOpenProposal,
  openProposalForm,
} from "./proposal-forms.ts";

/** Why a merge was just refused, as the merge operation said it (shown above the status). */
export interface Refusal {
  message: string;
  policies?: PolicyResult[];
  conflicts?: { path: string }[];
}

/** A review the service refused, shown again with what was typed so nothing is lost. */
export interface ReviewDraft {
  message: string;
  status?: ReviewStatus;
  body: string;
}

const when = timeTag;
const passFail = (pass: boolean) =>
  pass ? html`<span class="pass">✓ pass</span>` : html`<span class="fail">✗ fail</span>`;

export async function branchesPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  csrf: Html,
): Promise<Html> {
  const name = access.repo.name;
  const branches = await listBranches(ctx.pool, access, {
    status: "active",
    draft: false,
    includeDraft: true,
  });
  const body = html`<h1>Branches</h1>
<table><thead><tr><th scope="col">Branch</th><th scope="col">Head</th><th scope="col">Created by</th><th scope="col">Draft</th></tr></thead><tbody>
${branches.map((b) => html`<tr><td><a href="${b.name === MAIN ? u.treeUrl(name) : u.branchUrl(name, b.name)}">${b.name}</a></td><td>${b.head_sequence}</td><td>${b.created_by}</td><td>${b.draft ? "draft" : ""}</td></tr>`)}
</tbody></table>
${atLeast(access.role, "maintainer") ? createBranchForm(name, csrf) : ""}`;
  return page({
    title: `Branches of ${name}`,
    actor,
    repo: access,
    tab: "branches",
    crumbs: repoCrumbs(name),
    body,
  });
}

function statusSection(status: BranchStatusReport, branch: BranchRecord): Html {
  return html`<section aria-labelledby="status-h" data-live-region="status"><h2 id="status-h">Merge status</h2>
<p id="mergeable">${status.mergeable ? html`<strong class="pass">Mergeable</strong>` : html`<strong class="fail">Not mergeable</strong>`}${branch.status !== "active" ? html` (branch is ${branch.status})` : branch.draft ? " (branch is a draft)" : ""}</p>
${
  status.policies.length === 0
    ? html`<p class="muted">No merge policies.</p>`
    : html`<table><caption>Policies</caption><thead><tr><th scope="col">Policy</th><th scope="col">Result</th><th scope="col">Reason</th></tr></thead><tbody>
${status.policies.map((p) => html`<tr><td>${p.name}</td><td>${passFail(p.pass)}</td><td>${p.reason}</td></tr>`)}</tbody></table>`
}
${status.conflicts.length > 0 ? html`<p class="fail">Conflicts with main: ${status.conflicts.map((c, i) => html`${i > 0 ? ", " : ""}<code>${c.path}</code>`)}</p>` : ""}
</section>`;
}

const checkedIf = (on: boolean) => (on ? new Html(" checked") : "");

/**
 * The review form offers only what this person may do: someone who authored a commit on the
 * branch may not approve it (submitReview refuses), so they are offered "Request changes" alone
 * and told why. Nothing is pre-selected for the others, so no one approves by accident.
 */
function reviewForm(action: string, csrf: Html, authored: boolean, draft: ReviewDraft | undefined): Html {
  const refused = draft
    ? html`<div class="notice refused" role="alert" id="review-refused"><h2>Review not recorded</h2><p>${draft.message}</p></div>`
    : "";
  const options = authored
    ? html`<p class="muted" id="no-self-approval">You authored commits on this branch, so you can comment or request changes but not approve it.</p>
<label><input type="radio" name="status" value="rejected" checked required> Request changes</label>`
    : html`<label><input type="radio" name="status" value="approved" required${checkedIf(draft?.status === "approved")}> Approve</label>
<label><input type="radio" name="status" value="rejected"${checkedIf(draft?.status === "rejected")}> Request changes</label>`;
  return html`${refused}<form method="post" action="${action}" id="review-form"><fieldset><legend>Review this branch</legend>${csrf}
<label for="review-body">Comment</label><textarea id="review-body" name="body" maxlength="65536">${draft?.body ?? ""}</textarea>
${options}
<button type="submit">Submit review</button></fieldset></form>`;
}

function refusalNotice(r: Refusal): Html {
  return html`<div class="notice refused" role="alert" id="merge-refused"><h2>Merge refused</h2><p>${r.message}</p>
${r.policies ? html`<ul>${r.policies.filter((p) => !p.pass).map((p) => html`<li><strong>${p.name}</strong>: ${p.reason}</li>`)}</ul>` : ""}
${r.conflicts ? html`<ul>${r.conflicts.map((c) => html`<li>conflict: <code>${c.path}</code></li>`)}</ul>` : ""}</div>`;
}

/** A file changed on a branch, for the diff renderer, with its comments under it. */
function branchChange(
  repo: string,
  branch: BranchRecord,
  c: { path: string; status: FileChange["status"]; binary: boolean; diff: string },
  comments: { body: string; author: string; sequence: number }[],
): FileChange {
  const at = { branch: branch.name, at: branch.head_sequence };
  return {
    path: c.path,
    status: c.status,
    patch: c.diff,
    binary: c.binary,
    links:
      c.status === "deleted" ? {} : { file: u.fileUrl(repo, c.path, at), raw: u.plainUrl(repo, c.path, at) },
    below: html`${comments.map((m) => html`<div class="notice comment"><p>${m.body}</p><p class="muted">${m.author} at sequence ${m.sequence}</p></div>`)}`,
  };
}

/** What the branch and proposal pages share: status, checks, reviews, comments, diff, forms. */
async function branchSections(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  branchName: string,
  csrf: Html,
  notice: Html | string,
  draft: ReviewDraft | undefined,
  diffLayout: { layout: DiffLayout; pageUrl: string },
): Promise<Html> {
  const name = access.repo.name;
  const branch = await getBranch(ctx.pool, access, branchName);
  const canReview = atLeast(access.role, "writer") && branch.status === "active";
  // A merged or abandoned branch has no merge to assess and no diff against today's main.
  const active = branch.status === "active";
  const [status, checks, reviews, comments, diff, authored] = await Promise.all([
    active ? branchStatus(ctx, actor, access, branchName) : null,
    listCheckRuns(ctx.pool, access, { branch: branchName }),
    listReviews(ctx.pool, access, { branch: branchName }),
    listComments(ctx.pool, access, { branch: branchName }),
    active ? diffBranch(ctx, access, branchName) : { changes: [], conflicts: [] },
    canReview ? authoredOnBranch(ctx.pool, access, branchName, actor.identity) : false,
  ]);
  const canMerge = atLeast(access.role, "maintainer") && branch.status === "active";
  const commentsOn = (path: string) => comments.filter((c) => c.path === path);
  const changed = new Set(diff.changes.map((c) => c.path));
  const elsewhere = comments.filter((c) => !changed.has(c.path));
  return html`${notice}
<p class="muted">Branch <code>${branch.name}</code> at sequence ${branch.head_sequence}, from main at ${branch.base_sequence} · <a href="${u.treeUrl(name, { branch: branch.name })}">Browse files</a></p>
${status ? statusSection(status, branch) : html`<p data-live-region="status" id="branch-closed"><strong>This branch is ${branch.status}.</strong></p>`}
<section aria-labelledby="checks-h" data-live-region="checks"><h2 id="checks-h">Checks</h2>
${
  checks.length === 0
    ? html`<p class="muted" id="no-checks">No check runs yet.</p>`
    : html`<table><thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Sequence</th><th scope="col">Reporter</th><th scope="col">Log</th></tr></thead><tbody>
${checks.map((c) => {
  const log = u.safeLink(c.log_url);
  return html`<tr class="check-run"><td>${c.check_name}</td><td class="${c.status === "passed" ? "pass" : c.status === "failed" ? "fail" : ""}">${c.status}</td><td>${c.sequence}</td><td>${c.reporter}</td><td>${log ? html`<a href="${log}" rel="noopener noreferrer">log</a>` : ""}</td></tr>`;
})}</tbody></table>`
}
</section>
<section aria-labelledby="reviews-h" data-live-region="reviews"><h2 id="reviews-h">Reviews</h2>
${reviews.length === 0 ? html`<p class="muted">No reviews yet.</p>` : html`<ul>${reviews.map((r) => html`<li class="review"><strong class="${r.status === "approved" ? "pass" : "fail"}">${r.status}</strong> by ${r.reviewer} at sequence ${r.sequence} (${when(r.created_at)})${r.body ? html`<blockquote>${r.body}</blockquote>` : ""}</li>`)}</ul>`}
</section>
${
  canReview
    ? reviewForm(u.reviewUrl(name, branch.name), csrf, authored, draft)
    : active
      ? html`<p class="muted" id="no-review-rights">Reviewing needs the writer role on this repo.</p>`
      : ""
}
${canMerge ? html`<form method="post" action="${u.mergeUrl(name, branch.name)}">${csrf}<button type="submit" id="merge-button">Merge into main</button></form>` : ""}
<section aria-labelledby="diff-h"><h2 id="diff-h">Changes</h2>
${
  diff.changes.length === 0
    ? html`<p class="muted">No changes relative to main.</p>`
    : renderChanges(
        diff.changes.map((c) => branchChange(name, branch, c, commentsOn(c.path))),
        {
          layout: diffLayout.layout,
          layoutHref: (view) =>
            u.withParams(diffLayout.pageUrl, { view: view === "unified" ? undefined : view }),
        },
      )
}
</section>
${elsewhere.length > 0 ? html`<section aria-labelledby="other-comments-h"><h2 id="other-comments-h">Other comments</h2>${elsewhere.map((m) => html`<div class="notice comment"><p><code>${m.path}</code>: ${m.body}</p><p class="muted">${m.author} at sequence ${m.sequence}</p></div>`)}</section>` : ""}`;
}

export async function branchPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  branchName: string,
  csrf: Html,
  refusal?: Refusal,
  draft?: ReviewDraft,
  layout: DiffLayout = "unified",
): Promise<Html> {
  const name = access.repo.name;
  const [open] = await listProposals(ctx.pool, access, { state: "open", branch: branchName });
  const notice = html`${refusal ? refusalNotice(refusal) : ""}${open ? html`<p>Proposal: <a href="${u.proposalUrl(name, open.id)}">${open.title}</a></p>` : ""}`;
  const body = html`<h1>Branch ${branchName}</h1>${await branchSections(ctx, actor, access, branchName, csrf, notice, draft, { layout, pageUrl: u.branchUrl(name, branchName) })}`;
  return page({
    title: `${branchName} · ${name}`,
    actor,
    repo: access,
    tab: "branches",
    liveBranch: branchName,
    liveSrc: u.branchUrl(name, branchName),
    crumbs: repoCrumbs(name),
    body,
  });
}

export async function proposalsPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  state: ProposalRecord["state"] | undefined,
  csrf: Html,
): Promise<Html> {
  const name = access.repo.name;
  const proposals = await listProposals(ctx.pool, access, { state });
  const body = html`<h1>Proposals</h1>
${
  proposals.length === 0
    ? html`<p>No proposals.</p>`
    : html`<table><thead><tr><th scope="col">Title</th><th scope="col">Branch</th><th scope="col">State</th><th scope="col">Author</th><th scope="col">Opened</th></tr></thead><tbody>
${proposals.map((p) => html`<tr><td><a href="${u.proposalUrl(name, p.id)}">${p.title}</a></td><td>${p.branch}</td><td>${p.state}</td><td>${p.author}</td><td>${when(p.created_at)}</td></tr>`)}
</tbody></table>`
}
${mayOpenProposal(access) ? openProposalForm(name, csrf) : ""}`;
  return page({
    title: `Proposals of ${name}`,
    actor,
    repo: access,
    tab: "proposals",
    crumbs: repoCrumbs(name),
    body,
  });
}

export async function proposalPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  id: string,
  csrf: Html,
  refusal?: Refusal,
  draft?: ReviewDraft,
  layout: DiffLayout = "unified",
): Promise<Html> {
  const name = access.repo.name;
  const p = await getProposal(ctx.pool, access, id);
  const notice = html`${refusal ? refusalNotice(refusal) : ""}`;
  const body = html`<h1>${p.title}</h1>
<p class="muted"><span class="state">${p.state}</span> · opened by ${p.author} on ${when(p.created_at)} · <a href="${u.branchUrl(name, p.branch)}">${p.branch}</a> into ${p.base_branch}</p>
${p.description ? html`<div class="description"><p>${p.description}</p></div>` : ""}
${mayChangeProposal(actor, access, p) ? html`${editProposalForm(name, p.id, csrf, { title: p.title, description: p.description })}${closeProposalForm(name, p.id, csrf)}` : ""}
${await branchSections(ctx, actor, access, p.branch, csrf, notice, draft, { layout, pageUrl: u.proposalUrl(name, p.id) })}`;
  return page({
    title: `${p.title} · ${name}`,
    actor,
    repo: access,
    tab: "proposals",
    liveBranch: p.branch,
    liveSrc: u.proposalUrl(name, p.id),
    crumbs: repoCrumbs(name),
    body,
  });
}
