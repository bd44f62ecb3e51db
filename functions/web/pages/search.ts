import type { RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { resolveView, type View } from "../../../shared/commits/view.ts";
import type { AppContext } from "../../../shared/context.ts";
import {
  findPathsInView,
  MAX_CANDIDATES,
  MAX_FINDER_CHARS,
  MAX_TERM_CHARS,
  type MatchingLine,
  type SearchHit,
  type SearchPage,
  searchInView,
  searchTermProblem,
} from "../../../shared/search/search.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import * as u from "../urls.ts";

/** Files per page of search results, and paths the finder lists. */
const RESULTS_PAGE = 20;
const FINDER_LIMIT = 50;

interface ViewQuery {
  branch: string;
  at?: number | undefined;
}

/** A page and its status: a refused term answers 400 with the form as typed. */
export interface Shown {
  page: Html;
  status: number;
}

/** The branch and sequence fields of the search and finder forms, filled with the view. */
function viewFields(prefix: string, branch: string, at: number | undefined): Html {
  return html`<label for="${prefix}-branch">Branch</label> <input id="${prefix}-branch" name="branch" value="${branch}" required>
<label for="${prefix}-at">At sequence</label> <input id="${prefix}-at" name="at" type="number" min="0" value="${at ?? ""}">`;
}

function refusal(message: string | null): Html | "" {
  return message ? html`<p class="notice refused" role="alert" id="search-refused">${message}</p>` : "";
}

/**
 * Search of file contents at a branch and sequence: each file whose text there contains the term,
 * with its first matching lines, each linked to that line of the file page at the same view.
 */
export async function searchPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: ViewQuery & { q: string; after?: string | undefined },
): Promise<Shown> {
  const name = access.repo.name;
  const problem = searchTermProblem(q.q);
  // A refused term reads no view: the form comes back as typed, whatever the branch.
  const view = problem ? null : await resolveView(ctx.pool, access.repo.id, q.branch, q.at);
  const found = view
    ? await searchInView(ctx.pool, access.repo.id, view, { term: q.q, after: q.after, limit: RESULTS_PAGE })
    : null;
  const at = view?.at ?? q.at;
  const body = html`<h1>Search ${name}</h1>
<form class="view search" method="get" action="${u.searchUrl(name)}" role="search" aria-label="Search file contents">
<label for="search-q">Search for</label> <input id="search-q" name="q" type="search" value="${q.q}" maxlength="${MAX_TERM_CHARS}">
${viewFields("search", q.branch, at)}
<button type="submit">Search</button>
</form>
${refusal(problem)}
${view && found ? results(name, view, q, found) : ""}`;
  const shown = { branch: q.branch, at };
  return {
    page: page({ title: `Search ${name}`, actor, repo: access, view: shown, crumbs: repoCrumbs(name), body }),
    status: problem ? 400 : 200,
  };
}

function results(
  repo: string,
  view: View,
  q: { q: string; branch: string; after?: string | undefined },
  found: SearchPage,
): Html {
  const where = { branch: q.branch, at: view.at };
  const last = found.hits.at(-1);
  return html`<section aria-labelledby="results-h"><h2 id="results-h">Files on ${q.branch} at sequence ${view.at} containing &ldquo;${q.q}&rdquo;</h2>
${found.capped ? html`<p class="notice" id="search-capped">More than ${MAX_CANDIDATES.toLocaleString("en")} different texts in this repo contain &ldquo;${q.q}&rdquo;: these results come from ${MAX_CANDIDATES.toLocaleString("en")} of them. A longer search finds the rest.</p>` : ""}
${
  found.hits.length === 0
    ? html`<p id="no-results">No ${q.after ? "more files" : "file"} on ${q.branch} at sequence ${view.at} contains &ldquo;${q.q}&rdquo;.</p>`
    : html`<ol class="search-results">${found.hits.map((hit) => fileHit(repo, where, hit))}</ol>`
}
<nav class="pager" aria-label="Pages">
${q.after ? html`<a href="${u.searchUrl(repo, { q: q.q, ...where })}">First page</a>` : ""}
${found.more && last ? html`<a href="${u.searchUrl(repo, { q: q.q, ...where, after: last.path })}" rel="next">Next page</a>` : ""}
</nav></section>`;
}

function fileHit(repo: string, where: { branch: string; at: number }, hit: SearchHit): Html {
  const file = u.fileUrl(repo, hit.path, where);
  const unshown = hit.lineCount - hit.lines.length;
  return html`<li><h3><a href="${file}">${hit.path}</a></h3>
<table class="lines search-lines"><tbody>${hit.lines.map((line) => lineRow(file, line))}</tbody></table>
${unshown > 0 ? html`<p class="muted"><a href="${file}">${unshown} more matching line${unshown === 1 ? "" : "s"}</a></p>` : ""}</li>`;
}

function lineRow(file: string, line: MatchingLine): Html {
  return html`<tr><td class="n"><a href="${file}#L${line.number}" aria-label="Line ${line.number}">${line.number}</a></td><td>${line.parts.map(
    (part) => (part.match ? html`<mark>${part.text}</mark>` : part.text),
  )}</td></tr>`;
}

/**
 * The file finder: paths of the view holding the typed characters in order, best first, each
 * linked to its file page at the same view. Works as a GET form; the page's script filters as
 * one types by fetching this page and swapping its `[data-find-results]` region.
 */
export async function finderPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: ViewQuery & { q: string },
): Promise<Shown> {
  const name = access.repo.name;
  const problem =
    q.q.length > MAX_FINDER_CHARS ? `a path to find is at most ${MAX_FINDER_CHARS} characters` : null;
  const view = await resolveView(ctx.pool, access.repo.id, q.branch, q.at);
  const found =
    problem || q.q === ""
      ? null
      : await findPathsInView(ctx.pool, access.repo.id, view, { term: q.q, limit: FINDER_LIMIT });
  const where = { branch: q.branch, at: view.at };
  const body = html`<h1>Find a file in ${name}</h1>
<form class="view finder" method="get" action="${u.findUrl(name)}" role="search" aria-label="Find a file by path">
<label for="find-q">Path</label> <input id="find-q" name="q" type="search" value="${q.q}" autocomplete="off" autofocus data-find-input>
<input type="hidden" name="branch" value="${q.branch}"><input type="hidden" name="at" value="${view.at}">
<button type="submit">Find</button>
<span class="muted">on ${q.branch} at sequence ${view.at}</span>
</form>
${refusal(problem)}
<section aria-labelledby="found-h" data-find-results><h2 id="found-h" class="visually-hidden">Matching paths</h2>
${
  found === null
    ? html`<p class="muted">Type part of a path: its letters in order are enough (<kbd>rdme</kbd> finds README.md).</p>`
    : found.paths.length === 0
      ? html`<p id="no-paths">No path on ${q.branch} at sequence ${view.at} matches &ldquo;${q.q}&rdquo;.</p>`
      : html`<ol class="found-paths">${found.paths.map((path) => html`<li><a href="${u.fileUrl(name, path, where)}">${path}</a></li>`)}</ol>
${found.more ? html`<p class="muted">Only the best ${FINDER_LIMIT} are listed; type more to narrow them.</p>` : ""}`
}
</section>`;
  return {
    page: page({
      title: `Find a file in ${name}`,
      actor,
      repo: access,
      view: where,
      crumbs: repoCrumbs(name),
      body,
    }),
    status: problem ? 400 : 200,
  };
}
