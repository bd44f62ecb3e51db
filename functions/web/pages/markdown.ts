import type { Token } from "markdown-it";
import { preloaded } from "../../../shared/lazy.ts";
import * as u from "../urls.ts";

/**
 * Markdown with raw HTML off: a `<script>` in a file is text, never markup. Links stay links.
 * Files and issues (mentions.ts) share it. markdown-it is imported before the first web page
 * (functions/web/routes.ts), not at start: few requests render Markdown.
 */
export const markdownIt = preloaded(async () => {
  const { default: Parser } = await import("markdown-it");
  return new Parser({ html: false, linkify: false });
});

/** Where a Markdown file is being read: its relative links keep this branch and sequence. */
export interface ReadingAt {
  repo: string;
  path: string;
  branch: string;
  at: number;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * A repo path for `href` as written in the file at `from`: relative to the file's folder, or to
 * the repo's root when it starts with `/`. Null when it climbs above the root (never a link out
 * of the repo) or does not decode; "" is the root itself.
 */
export function resolveRepoPath(from: string, href: string): string | null {
  let target: string;
  try {
    target = decodeURIComponent(href);
  } catch {
    return null;
  }
  const parts = target.startsWith("/") ? [] : from.split("/").slice(0, -1);
  for (const segment of target.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(segment);
  }
  return parts.join("/");
}

/** The page a link in the file goes to, at the same branch and sequence; null drops the link. */
function rewrite(href: string, kind: "link" | "image", where: ReadingAt): string | null {
  if (href === "" || href.startsWith("#") || href.startsWith("//") || SCHEME.test(href)) return href;
  const hash = href.indexOf("#");
  const fragment = hash >= 0 ? href.slice(hash) : "";
  const pathPart = (hash >= 0 ? href.slice(0, hash) : href).split("?")[0] ?? "";
  const path = resolveRepoPath(where.path, pathPart);
  if (path === null) return null;
  const view = { branch: where.branch, at: where.at };
  if (kind === "image") return path === "" ? null : u.rawUrl(where.repo, path, view);
  // A folder (or the root): the folder view at the same view.
  if (path === "" || pathPart.endsWith("/")) return u.folderUrl(where.repo, path, view);
  return u.fileUrl(where.repo, path, view) + fragment;
}

function rewriteLinks(tokens: Token[], where: ReadingAt): void {
  for (const token of tokens) {
    if (token.children) rewriteLinks(token.children, where);
    const attr = token.type === "link_open" ? "href" : token.type === "image" ? "src" : null;
    const value = attr ? token.attrGet(attr) : null;
    if (!attr || value === null) continue;
    const next = rewrite(String(value), attr === "src" ? "image" : "link", where);
    if (next === null) token.attrs = (token.attrs ?? []).filter(([name]) => name !== attr);
    else token.attrSet(attr, next);
  }
}

/** The file rendered, its relative links and images pointing into the repo at the same view. */
export function renderMarkdown(text: string, where: ReadingAt): string {
  const markdown = markdownIt.get();
  const env = {};
  const tokens = markdown.parse(text, env);
  rewriteLinks(tokens, where);
  return markdown.renderer.render(tokens, markdown.options, env);
}
