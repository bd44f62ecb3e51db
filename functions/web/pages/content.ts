import { createTwoFilesPatch } from "diff";
import YAML from "yaml";
import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { loadBodyUpTo } from "../../../shared/commits/content.ts";
import { readCommit, readFileHistory } from "../../../shared/commits/reads.ts";
import { fileInView, resolveView } from "../../../shared/commits/view.ts";
import type { AppContext } from "../../../shared/context.ts";
import { fail } from "../../../shared/errors.ts";
import { type Html, html, trusted } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { type ReadingAt, renderMarkdown } from "./markdown.ts";

/** Files above this size are offered for download instead of shown. */
export const MAX_SHOWN_BYTES = 1_048_576;
const HISTORY_PAGE = 50;

const when = timeTag;

/** How a file's bytes are shown: rendered Markdown, pretty JSON or YAML, numbered text, or a download. */
function fileBody(
  path: string,
  contentType: string,
  binary: boolean,
  data: Buffer | null,
  download: string,
  where: ReadingAt,
): Html {
  if (binary || data === null)
    return html`<p>${binary ? "This file is binary." : "This file is too large to show."} <a href="${download}" download>Download it</a>.</p>`;
  const text = data.toString("utf8");
  const type = contentType.split(";")[0]?.trim() ?? "";
  const lower = path.toLowerCase();
  if (type === "text/markdown" || lower.endsWith(".md") || lower.endsWith(".markdown"))
    return html`<div class="markdown">${trusted(renderMarkdown(text, where))}</div>
<details><summary>Source</summary>${numbered(text)}</details>`;
  const pretty = prettyData(type, lower, text);
  if (pretty !== null)
    return html`<pre><code>${pretty}</code></pre><details><summary>Source</summary>${numbered(text)}</details>`;
  return numbered(text);
}

/** JSON and YAML, re-indented; null for other text, or when the text does not parse. */
function prettyData(type: string, lower: string, text: string): string | null {
  try {
    if (type === "application/json" || lower.endsWith(".json"))
      return JSON.stringify(JSON.parse(text), null, 2);
    if (type.includes("yaml") || lower.endsWith(".yaml") || lower.endsWith(".yml"))
      return YAML.stringify(YAML.parse(text), { indent: 2 });
  } catch {
    return null;
  }
  return null;
}

function numbered(text: string): Html {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return html`<table class="lines"><tbody>${lines.map((line, i) => html`<tr id="L${i + 1}"><td class="n">${i + 1}</td><td>${line}</td></tr>`)}</tbody></table>`;
}

export async function filePage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { path: string; branch: string; at?: number | undefined },
): Promise<Html> {
  const name = access.repo.name;
  const view = await resolveView(ctx.pool, access.repo.id, q.branch, q.at);
  const version = await fileInView(ctx.pool, view, q.path);
  if (!version) fail("FILE_NOT_FOUND", `'${q.path}' does not exist on '${q.branch}' at ${view.at}`);
  const [data, history] = await Promise.all([
    version.is_binary
      ? null
      : loadBodyUpTo(ctx.pool, ctx.blobs, access.repo.id, version.content_sha256, MAX_SHOWN_BYTES),
    readFileHistory(ctx.pool, access, { path: q.path, branch: q.branch, limit: HISTORY_PAGE }),
  ]);
  const download = u.rawUrl(name, q.path, { branch: q.branch, at: view.at });
  const body = html`<h1>${q.path}</h1>
<p class="muted">On <a href="${u.treeUrl(name, { branch: q.branch, at: view.at })}">${q.branch} at sequence ${view.at}</a> · ${version.content_type} · <a href="${download}" download>Download</a>${editLink(access, q.branch, q.path)}</p>
<section aria-labelledby="content-h"><h2 id="content-h">Content</h2>
${fileBody(q.path, version.content_type, version.is_binary, data, download, { repo: name, path: q.path, branch: q.branch, at: view.at })}
</section>
<section aria-labelledby="history-h"><h2 id="history-h">History</h2>
<p><a href="${u.historyUrl(name, { path: q.path, branch: q.branch })}" id="file-history-link">All commits that changed this file</a></p>
<table><thead><tr><th scope="col">Sequence</th><th scope="col">Change</th><th scope="col">Author</th><th scope="col">Message</th><th scope="col">When</th></tr></thead><tbody>
${history.map((h) => html`<tr><td><a href="${u.commitUrl(name, h.sequence)}">${h.sequence}</a></td><td>${h.deleted ? "deleted" : html`<a href="${u.fileUrl(name, q.path, { branch: q.branch, at: h.sequence })}">view</a>`}</td><td>${h.author}</td><td>${h.message}</td><td>${when(h.created_at)}</td></tr>`)}
</tbody></table></section>`;
  return page({ title: q.path, actor, repo: access, tab: "tree", crumbs: repoCrumbs(name), body });
}

/** A file's bytes as a download (the file page's link for binary and large files). */
export async function fileBytes(
  ctx: AppContext,
  access: RepoAccess,
  q: { path: string; branch: string; at?: number | undefined },
): Promise<{ data: Buffer; contentType: string }> {
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

/** The lines of a unified diff, each marked as added, deleted, hunk header or context. */
export function diffView(patch: string): Html {
  if (patch === "") return html`<p class="muted">No text diff (binary, too large, or too many changes).</p>`;
  const lines = patch.split("\n").slice(2);
  if (lines.at(-1) === "") lines.pop();
  const kind = (l: string) =>
    l.startsWith("@@") ? "hunk" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "ctx";
  return html`<table class="lines diff"><tbody>${lines.map((l) => html`<tr class="${kind(l)}"><td>${l}</td></tr>`)}</tbody></table>`;
}

/** The text of a version for a diff: "" for none; null when binary or too large. */
async function textAt(
  ctx: AppContext,
  access: RepoAccess,
  branch: string,
  at: number,
  path: string,
): Promise<string | null> {
  if (at < 0) return "";
  const version = await fileInView(ctx.pool, await resolveView(ctx.pool, access.repo.id, branch, at), path);
  if (!version) return "";
  if (version.is_binary) return null;
  const data = await loadBodyUpTo(
    ctx.pool,
    ctx.blobs,
    access.repo.id,
    version.content_sha256,
    MAX_SHOWN_BYTES,
  );
  return data === null ? null : data.toString("utf8");
}

export async function commitPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  sequence: number,
): Promise<Html> {
  const name = access.repo.name;
  const c = await readCommit(ctx.pool, access, sequence);
  const files = [];
  for (const f of c.files) {
    const [before, after] = await Promise.all([
      textAt(ctx, access, c.branch, sequence - 1, f.path).catch(() => ""),
      f.version_id === null ? "" : textAt(ctx, access, c.branch, sequence, f.path),
    ]);
    const patch =
      before === null || after === null
        ? ""
        : (createTwoFilesPatch(`a/${f.path}`, `b/${f.path}`, before, after, "", "", {
            context: 3,
            maxEditLength: 1000,
          }) ?? "");
    files.push({ ...f, patch });
  }
  const body = html`<h1>Commit ${c.sequence}</h1>
<p>${c.message}</p>
<p class="muted">On ${c.branch} by ${c.author}, ${when(c.created_at)} · <a href="${u.treeUrl(name, { branch: c.branch, at: c.sequence })}">Browse files at ${c.sequence}</a></p>
${files.map((f) => html`<section aria-label="${f.path}"><h2>${f.version_id === null ? html`${f.path} <span class="muted">(deleted)</span>` : html`<a href="${u.fileUrl(name, f.path, { branch: c.branch, at: c.sequence })}">${f.path}</a>`}</h2>${diffView(f.patch)}</section>`)}`;
  return page({
    title: `Commit ${c.sequence}`,
    actor,
    repo: access,
    tab: "history",
    crumbs: repoCrumbs(name),
    body,
  });
}
