import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import {
  type BranchMerge,
  type BranchRecord,
  branchMerge,
  getBranch,
  listBranches,
  MAIN,
} from "../../../shared/branches/branches.ts";
import { listCheckRuns } from "../../../shared/checks/checks.ts";
import type { CommentRecord } from "../../../shared/comments/comments.ts";
import { listComments } from "../../../shared/comments/comments.ts";
import { diffAgainstBase, diffBranch } from "../../../shared/commits/diff.ts";
import type { AppContext } from "../../../shared/context.ts";
import type { DocumentDiff } from "../../../shared/documents/changes.ts";
import { type BranchStatusReport, branchStatus } from "../../../shared/merge/status.ts";
import type { PolicyResult } from "../../../shared/policy/engine.ts";
import { getProposal, listProposals, type ProposalRecord } from "../../../shared/proposals/proposals.ts";
import { authoredOnBranch, listReviews, type ReviewStatus } from "../../../shared/reviews/reviews.ts";
import { csrfField } from "../csrf.ts";
import { Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { autoMergeSection } from "./auto-merge.ts";
import { conflictList, type ShownConflict } from "./conflicts.ts";
import { createBranchForm } from "./create.ts";
import { type DiffLayout, type FileChange, renderChanges } from "./diff.ts";
import { type CommentDraft, commentThread, type Discussion, strayDraft } from "./discussion.ts";
import { linkMentions } from "./mentions.ts";
import { ownersSection } from "./owners.ts";
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
  conflicts?: ShownConflict[];
}

/** A review the service refused, shown again with what was typed so nothing is lost. */
export interface ReviewDraft {
  message: string;
  status?: ReviewStatus;
  body: string;
}

/** What a form post that was refused hands back to the page it came from. */
export interface Refused {
  refusal?: Refusal | undefined;
  draft?: ReviewDraft | undefined;
  comment?: CommentDraft | undefined;
}

const when = timeTag;
const passFail = (pass: boolean) =>
  pass ? html`<span class="pass">&check; pass</span>` : html`<span class="fail">&cross; fail</span>`;

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
${status.conflicts.length > 0 ? html`<div id="status-conflicts"><p class="fail">Conflicts with main:</p>${conflictList(status.conflicts)}</div>` : ""}
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
${r.conflicts ? conflictList(r.conflicts) : ""}</div>`;
}

/** A merged branch says where it went; an abandoned one that it is closed. */
function closedSection(name: string, branch: BranchRecord, merge: BranchMerge | null): Html {
  if (!merge)
    return html`<p data-live-region="status" id="branch-closed"><strong>This branch is ${branch.status}.</strong></p>`;
  return html`<p data-live-region="status" id="merged-at"><strong>Merged at sequence <a href="${u.commitUrl(name, merge.merge_sequence)}">${merge.merge_sequence}</a> by ${merge.merged_by}</strong> on ${when(merge.merged_at)}.
Its head at sequence ${merge.head_sequence} was merged; the changes below are against main at ${branch.base_sequence}, as merged.</p>`;
}

/** The comments of a branch grouped by file, for the files of the diff and then the others. */
function byPath(comments: CommentRecord[], shownPaths: string[]) {
  const paths = [...new Set([...shownPaths, ...comments.map((c) => c.path)])];
  return paths.map((path) => ({ path, comments: comments.filter((c) => c.path === path) }));
}

/** A file changed on a branch, for the diff renderer, with its comment thread under it. */
function branchChange(
  repo: string,
  branch: BranchRecord,
  c: { path: string; status: FileChange["status"]; binary: boolean; diff: string; structure?: DocumentDiff },
  thread: Html,
): FileChange {
  const at = { branch: branch.name, at: branch.head_sequence };
  return {
    path: c.path,
    status: c.status,
    patch: c.diff,
    binary: c.binary,
    structure: c.structure,
    links:
      c.status === "deleted" ? {} : { file: u.fileUrl(repo, c.path, at), raw: u.plainUrl(repo, c.path, at) },
    below: thread,
  };
}

/** Where a branch or proposal page shows its diff: the layout, and the page's URL to toggle it. */
interface DiffPlacement {
  layout: DiffLayout;
  pageUrl: string;
}

/** What the branch and proposal pages share: status, checks, reviews, comments, diff, forms. */
async function branchSections(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  branchName: string,
  csrf: Html,
  notice: Html | string,
  refused: Refused,
  placement: DiffPlacement,
): Promise<Html> {
  const name = access.repo.name;
  const branch = await getBranch(ctx.pool, access, branchName);
  const canReview = atLeast(access.role, "writer") && branch.status === "active";
  // A merged or abandoned branch has no merge to assess, and its diff is against the base it
  // was last on, never today's main (which holds the merge and whatever came after it).
  const active = branch.status === "active";
  const [status, checks, reviews, comments, diff, authored, merge] = await Promise.all([
    active ? branchStatus(ctx, actor, access, branchName) : null,
    listCheckRuns(ctx.pool, access, { branch: branchName }),
    listReviews(ctx.pool, access, { branch: branchName }),
    listComments(ctx.pool, access, { branch: branchName }),
    active ? diffBranch(ctx, access, branchName) : diffAgainstBase(ctx, access, branchName),
    canReview ? authoredOnBranch(ctx.pool, access, branchName, actor.identity) : false,
    branch.status === "merged" ? branchMerge(ctx.pool, access, branchName) : null,
  ]);
  // A merged branch shows what its merge was judged by: the checks and reviews of the merged head.
  const judged = <T extends { sequence: number }>(rows: T[]) =>
    merge ? rows.filter((r) => r.sequence === merge.head_sequence) : rows;
  const [runs, verdicts] = [judged(checks), judged(reviews)];
  const canMerge = atLeast(access.role, "maintainer") && branch.status === "active";
  const discussion: Discussion = {
    repo: name,
    branch: branch.name,
    // Commenting needs a writer and an active branch, as POST …/comment does.
    csrf: canReview ? csrf : null,
    draft: refused.comment,
  };
  const changed = new Set(diff.changes.map((c) => c.path));
  const threads = byPath(comments, [...changed]);
  const threadOf = (path: string) => threads.find((t) => t.path === path)?.comments ?? [];
  const elsewhere = threads.filter((t) => !changed.has(t.path));
  return html`${notice}${strayDraft(discussion, threads)}
<p class="muted">Branch <code>${branch.name}</code> at sequence ${branch.head_sequence}, from main at ${branch.base_sequence} · <a href="${u.treeUrl(name, { branch: branch.name })}">Browse files</a></p>
${status ? statusSection(status, branch) : closedSection(name, branch, merge)}
${status ? ownersSection(status.owners) : ""}
<section aria-labelledby="checks-h" data-live-region="checks"><h2 id="checks-h">${merge ? `Checks of the merged head (sequence ${merge.head_sequence})` : "Checks"}</h2>
${
  runs.length === 0
    ? html`<p class="muted" id="no-checks">${merge ? "No check runs at the merged head." : "No check runs yet."}</p>`
    : html`<table><thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Sequence</th><th scope="col">Reporter</th><th scope="col">Log</th></tr></thead><tbody>
${runs.map((c) => {
  const log = u.safeLink(c.log_url);
  return html`<tr class="check-run"><td>${c.check_name}</td><td class="${c.status === "passed" ? "pass" : c.status === "failed" ? "fail" : ""}">${c.status}</td><td>${c.sequence}</td><td>${c.reporter}</td><td>${log ? html`<a href="${log}" rel="noopener noreferrer">log</a>` : ""}</td></tr>`;
})}</tbody></table>`
}
</section>
<section aria-labelledby="reviews-h" data-live-region="reviews"><h2 id="reviews-h">${merge ? `Reviews of the merged head (sequence ${merge.head_sequence})` : "Reviews"}</h2>
${verdicts.length === 0 ? html`<p class="muted">No reviews${merge ? " at the merged head" : " yet"}.</p>` : html`<ul>${verdicts.map((r) => html`<li class="review"><strong class="${r.status === "approved" ? "pass" : "fail"}">${r.status}</strong> by ${r.reviewer} at sequence ${r.sequence} (${when(r.created_at)})${r.body ? html`<blockquote>${r.body}</blockquote>` : ""}</li>`)}</ul>`}
</section>
${
  canReview
    ? reviewForm(u.reviewUrl(name, branch.name), csrf, authored, refused.draft)
    : active
      ? html`<p class="muted" id="no-review-rights">Reviewing needs the writer role on this repo.</p>`
      : ""
}
${canMerge ? html`<form method="post" action="${u.mergeUrl(name, branch.name)}">${csrf}<button type="submit" id="merge-button">Merge into main</button></form>` : ""}
${autoMergeSection(access, branch, csrf)}
<section aria-labelledby="diff-h"><h2 id="diff-h">Changes</h2>
${
  diff.changes.length === 0
    ? html`<p class="muted">No changes relative to main.</p>`
    : renderChanges(
        diff.changes.map((c) =>
          branchChange(name, branch, c, commentThread(discussion, c.path, threadOf(c.path))),
        ),
        {
          layout: placement.layout,
          layoutHref: (view) =>
            u.withParams(placement.pageUrl, { view: view === "unified" ? undefined : view }),
        },
      )
}
</section>
${elsewhere.length > 0 ? html`<section aria-labelledby="other-comments-h"><h2 id="other-comments-h">Other comments</h2>${elsewhere.map((t) => html`<section class="file-comments" aria-label="${t.path}"><h3><code>${t.path}</code></h3>${commentThread(discussion, t.path, t.comments)}</section>`)}</section>` : ""}`;
}

export async function branchPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  branchName: string,
  csrf: Html,
  refused: Refused = {},
  layout: DiffLayout = "unified",
): Promise<Html> {
  const name = access.repo.name;
  // The newest proposal of the branch: the open one, or the one it was merged or closed with.
  const [latest] = await listProposals(ctx.pool, access, { branch: branchName });
  const notice = html`${refused.refusal ? refusalNotice(refused.refusal) : ""}${latest ? html`<p id="branch-proposal">Proposal: <a href="${u.proposalNumberUrl(name, latest.number)}">#${latest.number} ${latest.title}</a>${latest.state === "open" ? "" : html` <span class="muted">(${latest.state})</span>`}</p>` : ""}`;
  const body = html`<h1>Branch ${branchName}</h1>${await branchSections(ctx, actor, access, branchName, csrf, notice, refused, { layout, pageUrl: u.branchUrl(name, branchName) })}`;
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
${proposals.map((p) => html`<tr><td><a href="${u.proposalNumberUrl(name, p.number)}"><span class="muted">#${p.number}</span> ${p.title}</a></td><td>${p.branch}</td><td>${p.state}</td><td>${p.author}</td><td>${when(p.created_at)}</td></tr>`)}
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
  refused: Refused = {},
  layout: DiffLayout = "unified",
): Promise<Html> {
  const name = access.repo.name;
  const p = await getProposal(ctx.pool, access, id);
  const notice = html`${refused.refusal ? refusalNotice(refused.refusal) : ""}`;
  const body = html`<h1>${p.title} <span class="muted proposal-number">#${p.number}</span></h1>
<p class="muted"><span class="state">${p.state}</span> · opened by ${p.author} on ${when(p.created_at)} · <a href="${u.branchUrl(name, p.branch)}">${p.branch}</a> into ${p.base_branch}</p>
${p.description ? html`<div class="description"><p>${linkMentions(name, p.description)}</p></div>` : ""}
${mayChangeProposal(actor, access, p) ? html`${editProposalForm(name, p.id, csrf, { title: p.title, description: p.description })}${closeProposalForm(name, p.id, csrf)}` : ""}
${await branchSections(ctx, actor, access, p.branch, csrf, notice, refused, { layout, pageUrl: u.proposalNumberUrl(name, p.number) })}`;
  return page({
    title: `#${p.number} ${p.title} · ${name}`,
    actor,
    repo: access,
    tab: "proposals",
    liveBranch: p.branch,
    liveSrc: u.proposalNumberUrl(name, p.number),
    crumbs: repoCrumbs(name),
    body,
  });
}

/**
 * The page a branch's form posts return to when refused, showing why and what was typed: the
 * branch's proposal (`proposalId`) if it has one, else the branch itself.
 */
export function refusedOnBranchPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  where: { branch: string; proposalId: string | undefined },
  refused: Refused,
): Promise<Html> {
  const csrf = csrfField(actor);
  return where.proposalId
    ? proposalPage(ctx, actor, access, where.proposalId, csrf, refused)
    : branchPage(ctx, actor, access, where.branch, csrf, refused);
}
