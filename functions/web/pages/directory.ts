import type { RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import type { AppContext } from "../../../shared/context.ts";
import { requireOrg } from "../../../shared/orgs/access.ts";
import { listOrgs } from "../../../shared/orgs/orgs.ts";
import { listReleases, type ReleaseRecord, releaseBranches } from "../../../shared/releases/releases.ts";
import { listRepos, type RepoRecord } from "../../../shared/repos/repos.ts";
import { type Html, html, trusted } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { createOrgForm, createRepoForm } from "./create.ts";
import { renderMarkdown } from "./markdown.ts";
import { myInvitesSection } from "./members.ts";

const day = timeTag;

const repoTable = (repos: RepoRecord[]) =>
  repos.length === 0
    ? html`<p>No repos you can read.</p>`
    : html`<table><thead><tr><th scope="col">Repo</th><th scope="col">Created by</th><th scope="col">Created</th></tr></thead><tbody>
${repos.map((r) => html`<tr><td><a href="${u.repoUrl(r.name)}">${r.name}</a></td><td>${r.created_by}</td><td>${day(r.created_at)}</td></tr>`)}
</tbody></table>`;

/** The start page: the orgs the caller can see and every repo they can read. */
export async function homePage(ctx: AppContext, actor: Actor, csrf: Html): Promise<Html> {
  const [orgs, repos] = await Promise.all([listOrgs(ctx.pool, actor), listRepos(ctx.pool, actor)]);
  const body = html`<h1>Orgs and repos</h1>
<section aria-labelledby="orgs-h"><h2 id="orgs-h">Orgs</h2>
${orgs.length === 0 ? html`<p>You belong to no org.</p>` : html`<ul>${orgs.map((o) => html`<li><a href="${u.orgUrl(o.name)}">${o.name}</a></li>`)}</ul>`}
</section>
<section aria-labelledby="repos-h"><h2 id="repos-h">Repos</h2>${repoTable(repos)}</section>
${await myInvitesSection(ctx, actor, csrf)}
${createOrgForm(csrf)}`;
  return page({ title: "Orgs and repos", actor, body });
}

/** An org's repos, and the form that creates one for those who may (owners, global admins). */
export async function orgPage(ctx: AppContext, actor: Actor, org: string, csrf: Html): Promise<Html> {
  const { org: row, manage } = await requireOrg(ctx.pool, org, actor);
  const repos = await listRepos(ctx.pool, actor, org);
  const body = html`<h1>${row.name}</h1><section aria-labelledby="repos-h"><h2 id="repos-h">Repos</h2>${repoTable(repos)}</section>
${manage ? createRepoForm(row.name, csrf) : ""}`;
  return page({
    title: row.name,
    actor,
    crumbs: [
      ["Orgs", u.orgsUrl()],
      [row.name, u.orgUrl(row.name)],
    ],
    body,
  });
}

/** One release: where it points, its archive to download, and its notes rendered. */
function releaseItem(repo: string, r: ReleaseRecord, branch: string | undefined): Html {
  const view = branch ? { branch, at: r.sequence } : undefined;
  // The notes' relative links read the repo at the release's own branch and sequence.
  const notes = view && r.notes ? renderMarkdown(r.notes, { repo, path: "", ...view }) : null;
  return html`<li class="release" id="release-${r.name}"><h2>${r.name}</h2>
<p class="muted">Sequence ${view ? html`<a href="${u.treeUrl(repo, view)}">${r.sequence}</a> on <code>${view.branch}</code>` : r.sequence} · by ${r.created_by} · ${day(r.created_at)}${view ? html` · <a class="archive" href="${u.archiveUrl(repo, view)}" download>Download .tar.gz</a>` : ""}</p>
${notes ? html`<div class="markdown release-notes">${trusted(notes)}</div>` : r.notes ? html`<pre class="release-notes">${r.notes}</pre>` : ""}</li>`;
}

export async function releasesPage(ctx: AppContext, actor: Actor, access: RepoAccess): Promise<Html> {
  const name = access.repo.name;
  const [releases, branches] = await Promise.all([
    listReleases(ctx.pool, access),
    releaseBranches(ctx.pool, access),
  ]);
  const body = html`<h1>Releases</h1>
${
  releases.length === 0
    ? html`<p>No releases.</p>`
    : html`<ol class="releases">${releases.map((r) => releaseItem(name, r, branches.get(r.name)))}</ol>`
}`;
  return page({
    title: `Releases of ${name}`,
    actor,
    repo: access,
    tab: "releases",
    crumbs: repoCrumbs(name),
    body,
  });
}
