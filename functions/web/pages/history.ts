import type { RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { readHistory } from "../../../shared/commits/history.ts";
import type { AppContext } from "../../../shared/context.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";

const HISTORY_PAGE = 50;

/** The filters of the history page: a GET form, so a filtered history is a link like any other. */
function historyFilter(repo: string, q: { branch?: string | undefined; path?: string | undefined }): Html {
  return html`<form class="view" method="get" aria-label="Filter the history">
<label for="history-branch">Branch</label> <input id="history-branch" name="branch" value="${q.branch ?? ""}" list="pick-branches" autocomplete="off" placeholder="all branches">
<datalist id="pick-branches" data-branches-of="${repo}"></datalist>
<label for="history-path">File or folder</label> <input id="history-path" name="path" value="${q.path ?? ""}" placeholder="every path">
<button type="submit">Filter</button>
${q.branch || q.path ? html`<a href="${u.historyUrl(repo)}">Clear</a>` : ""}
</form>`;
}

/**
 * The repo's commits, newest first, a page of HISTORY_PAGE at a time: all of them, or those in a
 * branch's view, or those that touched a file or a folder; the next page keeps the filters.
 */
export async function historyPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { branch?: string | undefined; path?: string | undefined; before?: number | undefined },
): Promise<Html> {
  const name = access.repo.name;
  const commits = await readHistory(ctx.pool, access, { ...q, limit: HISTORY_PAGE });
  const last = commits.at(-1);
  const body = html`<h1>History of ${q.path ?? name}</h1>
${historyFilter(name, q)}
<p><a href="${u.compareUrl(name)}" id="compare-link">Compare two branches or sequences</a></p>
${
  commits.length === 0
    ? html`<p>No commits${q.before === undefined ? "" : " before this point"}.</p>`
    : html`<table class="history"><thead><tr><th scope="col">Sequence</th><th scope="col">Message</th><th scope="col">Author</th><th scope="col">When</th><th scope="col">Branch</th><th scope="col">Files</th></tr></thead><tbody>
${commits.map((c) => html`<tr><td><a href="${u.commitUrl(name, c.sequence)}">${c.sequence}</a></td><td>${c.message.split("\n")[0]}</td><td>${c.author}</td><td>${timeTag(c.created_at)}</td><td>${c.branch}</td><td><a href="${u.treeUrl(name, { branch: c.branch, at: c.sequence })}">Browse at ${c.sequence}</a></td></tr>`)}
</tbody></table>`
}
<nav class="pager" aria-label="Pages">${q.before !== undefined ? html`<a href="${u.historyUrl(name, { branch: q.branch, path: q.path })}">Newest</a>` : ""}
${last && commits.length === HISTORY_PAGE ? html`<a rel="next" href="${u.historyUrl(name, { branch: q.branch, path: q.path, before: last.sequence })}">Older</a>` : ""}</nav>`;
  return page({
    title: `History of ${name}`,
    actor,
    repo: access,
    tab: "history",
    crumbs: repoCrumbs(name),
    body,
  });
}
