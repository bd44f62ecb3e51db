import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { loadBodyUpTo, loadSizedBodyUpTo } from "../../../shared/commits/content.ts";
import { readCommit, readFileHistory } from "../../../shared/commits/reads.ts";
import { fileInView, resolveView, type View } from "../../../shared/commits/view.ts";
import type { AppContext } from "../../../shared/context.ts";
import { fail } from "../../../shared/errors.ts";
import { type Html, html, trusted } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { type DiffLayout, type FileChange, renderChanges, type Unreadable } from "./diff.ts";
import { highlightLines, type Language, languageOf } from "./highlight.ts";
import { type ReadingAt, renderMarkdown } from "./markdown.ts";
import { linkMentions } from "./mentions.ts";
import { dataStructure } from "./structure.ts";

/** Files above this size are offered for download instead of shown. */
export const MAX_SHOWN_BYTES = 1_048_576;
const HISTORY_PAGE = 50;

const when = timeTag;

/** Which form of a file the page shows: rendered (Markdown) or structure (JSON, YAML), or its source. */
export type FileShow = "rendered" | "source";
export const fileShows = ["rendered", "source"] as const;

const isMarkdown = (type: string, lower: string) =>
  type === "text/markdown" || lower.endsWith(".md") || lower.endsWith(".markdown");

/** The "Rendered · Source" toggle of a file that has both forms. */
function showToggle(label: string, show: FileShow, href: (show: FileShow) => string): Html {
  const link = (to: FileShow, text: string) =>
    html`<a href="${href(to)}"${to === show ? trusted(' aria-current="true"') : ""}>${text}</a>`;
  return html`<p class="show-toggle">Show: ${link("rendered", label)} · ${link("source", "Source")}</p>`;
}

/**
 * How a file's bytes are shown: Markdown rendered, JSON and YAML by their structure, each with
 * its numbered source below (folded; a link to a line opens it) or alone; other text as numbered,
 * highlighted lines; binary and large files as a download.
 */
function fileBody(
  file: { path: string; contentType: string; binary: boolean; data: Buffer | null },
  links: { download: string; show: (show: FileShow) => string },
  show: FileShow,
  where: ReadingAt,
): Html {
  if (file.binary || file.data === null)
    return html`<p>${file.binary ? "This file is binary." : "This file is too large to show."} <a href="${links.download}" download>Download it</a>.</p>`;
  const text = file.data.toString("utf8");
  const type = file.contentType.split(";")[0]?.trim() ?? "";
  const source = numbered(text, languageOf(file.path, file.contentType));
  const markdown = isMarkdown(type, file.path.toLowerCase());
  const shown = markdown
    ? html`<div class="markdown">${trusted(renderMarkdown(text, where))}</div>`
    : dataStructure(file.path, file.contentType, text);
  if (shown === null) return source;
  const toggle = showToggle(markdown ? "Rendered" : "Structure", show, links.show);
  if (show === "source") return html`${toggle}${source}`;
  return html`${toggle}${shown}<details class="source"><summary>Source</summary>${source}</details>`;
}

/**
 * A text's lines, highlighted, each a row `id="L{n}"` whose number links to `#L{n}`: the form
 * other pages link to (search results). The page's script selects a line or, with shift, a range
 * (`#L3-L9`); without script the link still scrolls to the line (and `:target` marks it).
 */
function numbered(text: string, language: Language | null): Html {
  const lines = highlightLines(text, language);
  return html`<table class="lines code" data-line-numbers><tbody>${lines.map((line, i) => html`<tr id="L${i + 1}"><td class="n"><a href="#L${i + 1}">${i + 1}</a></td><td class="code">${line}</td></tr>`)}</tbody></table>`;
}

export async function filePage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { path: string; branch: string; at?: number | undefined; show?: FileShow | undefined },
): Promise<Html> {
  const name = access.repo.name;
  const view = await resolveView(ctx.pool, access.repo.id, q.branch, q.at);
  const version = await fileInView(ctx.pool, view, q.path);
  if (!version) fail("FILE_NOT_FOUND", `'${q.path}' does not exist on '${q.branch}' at ${view.at}`);
  const [data, history] = await Promise.all([
    version.is_binary
      ? null
      : loadBodyUpTo(ctx.pool, ctx.blobs, access.repo.id, version.content_sha256, MAX_SHOWN_BYTES),
    readFileHistory(ctx, access, { path: q.path, branch: q.branch, limit: HISTORY_PAGE }),
  ]);
  const at = { branch: q.branch, at: view.at };
  const download = u.rawUrl(name, q.path, at);
  const plain = version.is_binary
    ? ""
    : html` · <a href="${u.plainUrl(name, q.path, at)}" id="raw-link">Raw</a>`;
  const file = { path: q.path, contentType: version.content_type, binary: version.is_binary, data };
  const show = (to: FileShow) =>
    u.withParams(u.fileUrl(name, q.path, at), { show: to === "source" ? to : undefined });
  const body = html`<h1>${q.path}</h1>
<p class="muted">On <a href="${u.treeUrl(name, at)}">${q.branch} at sequence ${view.at}</a> · ${version.content_type}${plain} · <a href="${download}" download>Download</a>${editLink(access, q.branch, q.path)}</p>
<section aria-labelledby="content-h"><h2 id="content-h">Content</h2>
${fileBody(file, { download, show }, q.show ?? "rendered", { repo: name, path: q.path, ...at })}
</section>
<section aria-labelledby="history-h"><h2 id="history-h">History</h2>
<p><a href="${u.historyUrl(name, { path: q.path, branch: q.branch })}" id="file-history-link">All commits that changed this file</a></p>
<table><thead><tr><th scope="col">Sequence</th><th scope="col">Change</th><th scope="col">Author</th><th scope="col">Message</th><th scope="col">When</th></tr></thead><tbody>
${history.map((h) => html`<tr><td><a href="${u.commitUrl(name, h.sequence)}">${h.sequence}</a></td><td>${h.deleted ? "deleted" : html`<a href="${u.fileUrl(name, q.path, { branch: q.branch, at: h.sequence })}">view</a>`}</td><td>${h.author}</td><td>${h.message}</td><td>${when(h.created_at)}</td></tr>`)}
</tbody></table></section>`;
  const shown = { branch: q.branch, at: view.at };
  return page({
    title: q.path,
    actor,
    repo: access,
    tab: "tree",
    view: shown,
    crumbs: repoCrumbs(name),
    body,
  });
}

/** A file's bytes as a download (the file page's link for binary and large files). */
export async function fileBytes(
  ctx: AppContext,
  access: RepoAccess,
  q: { path: string; branch: string; at?: number | undefined },
): Promise<{ data: Buffer; contentType: string; binary: boolean }> {
  const view = await resolveView(ctx.pool, access.repo.id, q.branch, q.at);
  const version = await fileInView(ctx.pool, view, q.path);
  if (!version) fail("FILE_NOT_FOUND", `'${q.path}' does not exist on '${q.branch}' at ${view.at}`);
  const data = await loadBodyUpTo(
    ctx.pool,
    ctx.blobs,
    access.repo.id,
    version.content_sha256,
    Number.MAX_SAFE_INTEGER,
  );
  return {
    data: data ?? Buffer.alloc(0),
    contentType: version.is_binary ? "application/octet-stream" : version.content_type,
    binary: version.is_binary,
  };
}

/** The editor's link, for those who may commit (writers; the editor says where main needs more). */
export function editLink(access: RepoAccess, branch: string, path?: string): Html | "" {
  if (!atLeast(access.role, "writer")) return "";
  const href = u.editUrl(access.repo.name, { branch, path });
  return path
    ? html` · <a href="${href}" id="edit-link">Edit or delete</a>`
    : html`<p><a href="${href}" id="add-link">Add a file</a></p>`;
}

/** How many changed files of a commit page are read at once. */
const FILES_AT_ONCE = 8;

/** A file's version in a view, as one side of a diff: null when absent (or no view: before the first). */
async function sideIn(
  ctx: AppContext,
  access: RepoAccess,
  view: View | null,
  path: string,
): Promise<{ side: string | null | Unreadable; contentType?: string }> {
  if (!view) return { side: null };
  const version = await fileInView(ctx.pool, view, path);
  if (!version) return { side: null };
  // A binary version's size is all a diff shows of it: read none of its bytes.
  const limit = version.is_binary ? 0 : MAX_SHOWN_BYTES;
  const { size, data } = await loadSizedBodyUpTo(
    ctx.pool,
    ctx.blobs,
    access.repo.id,
    version.content_sha256,
    limit,
  );
  const side =
    version.is_binary || data === null ? { binary: version.is_binary, size } : data.toString("utf8");
  return { side, contentType: version.content_type };
}

/**
 * A commit with the diff of each file against its version at the previous sequence, in the
 * layout asked for; with `file`, that file's diff alone and whole (the "Load this file's diff" link).
 */
export async function commitPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { sequence: number; view?: DiffLayout | undefined; file?: string | undefined },
): Promise<Html> {
  const name = access.repo.name;
  const c = await readCommit(ctx.pool, access, q.sequence);
  const files = q.file === undefined ? c.files : c.files.filter((f) => f.path === q.file);
  if (files.length === 0) fail("FILE_NOT_FOUND", `commit ${c.sequence} does not change '${q.file}'`);
  const layout = q.view ?? "unified";
  // The two views once for every file (a sequence before the branch's first has none).
  const [beforeView, afterView] = await Promise.all([
    c.sequence > 0 ? resolveView(ctx.pool, access.repo.id, c.branch, c.sequence - 1).catch(() => null) : null,
    resolveView(ctx.pool, access.repo.id, c.branch, c.sequence),
  ]);
  const change = async (f: { path: string }): Promise<FileChange> => {
    const [before, after] = await Promise.all([
      sideIn(ctx, access, beforeView, f.path),
      sideIn(ctx, access, afterView, f.path),
    ]);
    const at = { branch: c.branch, at: after.side === null ? c.sequence - 1 : c.sequence };
    const status = after.side === null ? "deleted" : before.side === null ? "added" : "modified";
    return {
      path: f.path,
      status,
      before: before.side,
      after: after.side,
      contentType: after.contentType ?? before.contentType,
      links: {
        file: after.side === null ? undefined : u.fileUrl(name, f.path, at),
        raw: u.plainUrl(name, f.path, at),
        alone: u.commitViewUrl(name, c.sequence, { view: layout, file: f.path }),
      },
    };
  };
  // A few files at a time: each may hold up to MAX_SHOWN_BYTES of text on each side.
  const changes: FileChange[] = [];
  for (let i = 0; i < files.length; i += FILES_AT_ONCE)
    changes.push(...(await Promise.all(files.slice(i, i + FILES_AT_ONCE).map(change))));
  const layoutHref = (view: DiffLayout) => u.commitViewUrl(name, c.sequence, { view, file: q.file });
  const body = html`<h1>Commit ${c.sequence}</h1>
<p>${linkMentions(name, c.message)}</p>
<p class="muted">On ${c.branch} by ${c.author}, ${when(c.created_at)} · <a href="${u.treeUrl(name, { branch: c.branch, at: c.sequence })}">Browse files at ${c.sequence}</a></p>
<section aria-labelledby="changes-h"><h2 id="changes-h">Changes</h2>
${q.file === undefined ? "" : html`<p><a href="${u.commitViewUrl(name, c.sequence, { view: layout })}">All files of this commit</a></p>`}
${renderChanges(changes, { layout, layoutHref, whole: q.file !== undefined })}
</section>`;
  return page({
    title: `Commit ${c.sequence}`,
    actor,
    repo: access,
    tab: "history",
    crumbs: repoCrumbs(name),
    body,
  });
}
