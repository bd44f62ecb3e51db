import { type Html, html } from "./html.ts";
import * as u from "./urls.ts";

/** The branch and sequence a repo page shows, which its search box and finder keep. */
export interface PageView {
  branch: string;
  at?: number | undefined;
}

/**
 * The search box of every repo page: a GET form (field `q`) to the search of file contents at the
 * view the page shows, and the link to the file finder, which the page's script opens on `t`.
 */
export function searchBox(repo: string, view: PageView | undefined, term = ""): Html {
  const branch = view && view.branch !== "main" ? view.branch : undefined;
  const at = view?.at;
  return html`<form class="repo-search" method="get" action="${u.searchUrl(repo)}" role="search" aria-label="Search this repo">
<label for="repo-search-q" class="visually-hidden">Search file contents</label>
<input id="repo-search-q" name="q" type="search" value="${term}" placeholder="Search files" maxlength="200" required>
${branch ? html`<input type="hidden" name="branch" value="${branch}">` : ""}
${at !== undefined ? html`<input type="hidden" name="at" value="${at}">` : ""}
<button type="submit">Search</button>
<a href="${u.findUrl(repo, { ...(branch ? { branch } : {}), at })}" id="find-link" data-find-key="t" aria-keyshortcuts="t">Find a file <kbd>t</kbd></a>
</form>`;
}
