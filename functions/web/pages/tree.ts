import type { RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { loadBodyUpTo } from "../../../shared/commits/content.ts";
import { type FolderEntry, folderReadme, readFolder } from "../../../shared/commits/folder.ts";
import { resolveView, type View } from "../../../shared/commits/view.ts";
import type { AppContext } from "../../../shared/context.ts";
import { fail } from "../../../shared/errors.ts";
import { type Html, html, trusted } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { editLink, MAX_SHOWN_BYTES } from "./content.ts";
import { renderMarkdown } from "./markdown.ts";

/**
 * The branch and sequence picker of the tree page: a GET form, usable without script, that keeps
 * the folder (it submits to the page's own path). The branch is typed; the page's script offers
 * the repo's branches (from the API) once the field is used, so rendering the page costs no
 * branch-list query (docs/web.md, "Speed").
 */
function viewPicker(repo: string, folder: string, branch: string, at: number, head: number): Html {
  return html`<form class="view" method="get" aria-label="Choose a branch and sequence">
<label for="pick-branch">Branch</label> <input id="pick-branch" name="branch" value="${branch}" list="pick-branches" autocomplete="off" required>
<datalist id="pick-branches" data-branches-of="${repo}"></datalist>
<label for="pick-at">At sequence</label> <input id="pick-at" name="at" type="number" min="0" max="${head}" value="${at}">
<button type="submit">Show</button>
<span class="muted">head of ${branch} is ${head}; ${at === head ? "showing the head" : html`showing sequence ${at} (<a href="${u.folderUrl(repo, folder, { branch })}">go to head</a>)`}</span>
</form>`;
}

/** A size as people read it: bytes below 1 KiB, then KiB, MiB, GiB with one decimal below 10. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let n = bytes / 1024;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[i]}`;
}

/** The breadcrumbs of a folder: the repo's, then one per segment of the folder's path. */
function folderCrumbs(
  repo: string,
  folder: string,
  view: { branch: string; at: number },
): [string, string][] {
  const crumbs = repoCrumbs(repo);
  crumbs[crumbs.length - 1] = [repo, u.folderUrl(repo, "", view)];
  const parts = folder === "" ? [] : folder.split("/");
  return [
    ...crumbs,
    ...parts.map((p, i): [string, string] => [p, u.folderUrl(repo, parts.slice(0, i + 1).join("/"), view)]),
  ];
}

function entryRow(repo: string, e: FolderEntry, view: { branch: string; at: number }): Html {
  const link =
    e.kind === "folder"
      ? html`<a href="${u.folderUrl(repo, e.path, view)}" class="folder">${e.name}/</a>`
      : html`<a href="${u.fileUrl(repo, e.path, view)}">${e.name}</a>`;
  const message = e.commit.message.split("\n")[0] ?? "";
  return html`<tr data-kind="${e.kind}"><td>${link}</td><td class="last-commit"><a href="${u.commitUrl(repo, e.commit.sequence)}">${e.commit.sequence}</a> ${message}</td><td>${timeTag(e.commit.created_at)}</td><td class="size">${e.size === null ? "" : humanSize(e.size)}</td></tr>`;
}

/** The folder's README rendered under the listing, its relative links at the same view. */
async function readmeSection(
  ctx: AppContext,
  access: RepoAccess,
  view: View,
  folder: string,
  branch: string,
): Promise<Html | ""> {
  const version = await folderReadme(ctx.pool, view, folder);
  if (!version || version.is_binary) return "";
  const path = version.path;
  const data = await loadBodyUpTo(
    ctx.pool,
    ctx.blobs,
    access.repo.id,
    version.content_sha256,
    MAX_SHOWN_BYTES,
  );
  if (data === null) return "";
  const where = { repo: access.repo.name, path, branch, at: view.at };
  const text = data.toString("utf8");
  const lower = path.toLowerCase();
  const body =
    lower.endsWith(".md") || lower.endsWith(".markdown")
      ? html`<div class="markdown">${trusted(renderMarkdown(text, where))}</div>`
      : html`<pre>${text}</pre>`;
  return html`<section aria-labelledby="readme-h" class="readme"><h2 id="readme-h"><a href="${u.fileUrl(access.repo.name, path, { branch, at: view.at })}">${path.slice(path.lastIndexOf("/") + 1)}</a></h2>${body}</section>`;
}

/**
 * A folder of the tree at a branch and sequence: folders first, then files, each with the last
 * commit that touched it and a file's size, paged by the last entry shown (`after`); the
 * folder's README under the listing.
 */
export async function treePage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { folder: string; branch: string; at?: number | undefined; after?: string | undefined; limit: number },
): Promise<Html> {
  const name = access.repo.name;
  const view = await resolveView(ctx.pool, access.repo.id, q.branch, q.at);
  const at = { branch: q.branch, at: view.at };
  const [{ entries, next }, readme] = await Promise.all([
    readFolder(ctx.pool, access.repo.id, view, { folder: q.folder, after: q.after, limit: q.limit }),
    readmeSection(ctx, access, view, q.folder, q.branch),
  ]);
  if (entries.length === 0 && q.folder !== "" && q.after === undefined)
    fail("FILE_NOT_FOUND", `no folder '${q.folder}' on '${q.branch}' at ${view.at}`);
  const title = q.folder === "" ? name : `${q.folder} · ${name}`;
  const body = html`<h1>${q.folder === "" ? name : q.folder}</h1>
${viewPicker(name, q.folder, q.branch, view.at, view.branch.head_sequence)}
${editLink(access, q.branch)}
<section aria-labelledby="files-h"><h2 id="files-h">Files</h2>
${
  entries.length === 0
    ? html`<p>No files${q.after ? " after this point" : ""} ${q.folder === "" ? "" : "in this folder "}at sequence ${view.at}.</p>`
    : html`<table class="folder-view"><thead><tr><th scope="col">Name</th><th scope="col">Last commit</th><th scope="col">When</th><th scope="col">Size</th></tr></thead><tbody>
${entries.map((e) => entryRow(name, e, at))}
</tbody></table>`
}
<nav class="pager" aria-label="Pages">
${q.after ? html`<a href="${u.folderUrl(name, q.folder, at)}">First page</a>` : ""}
${next ? html`<a href="${u.folderUrl(name, q.folder, { ...at, after: next })}" rel="next">Next page</a>` : ""}
</nav></section>
${readme}`;
  return page({
    title,
    actor,
    repo: access,
    tab: "tree",
    view: at,
    crumbs: folderCrumbs(name, q.folder, at),
    body,
  });
}
