import { preloaded } from "../../../shared/lazy.ts";
import { escapeHtml, type Html, html, trusted } from "../html.ts";

/**
 * Syntax highlighting on the server (docs/web.md, "Code and diffs"). Only highlight.js's core and
 * the languages of documents and code kept in a repo are loaded (highlighter.ts), once per
 * process and at the first web page, not at start (the full bundle registers ~190 languages).
 * Its output is `<span class="hljs-…">` around escaped text: class names only, so it needs no
 * inline style under the CSP; the colours are in the stylesheet (functions/web/assets.ts), for
 * the light and the dark scheme. These are the languages; highlighter.ts registers each.
 */
const LANGUAGES = [
  "bash",
  "css",
  "diff",
  "dockerfile",
  "go",
  "ini",
  "javascript",
  "json",
  "makefile",
  "markdown",
  "python",
  "rust",
  "sql",
  "typescript",
  "xml",
  "yaml",
] as const;

export type Language = (typeof LANGUAGES)[number];

/** highlight.js and its languages, loaded before the first page (functions/web/routes.ts). */
export const highlighter = preloaded(() => import("./highlighter.ts"));

const BY_EXTENSION: Record<string, Language> = {
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  css: "css",
  diff: "diff",
  patch: "diff",
  go: "go",
  ini: "ini",
  toml: "ini",
  cfg: "ini",
  conf: "ini",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "javascript",
  json: "json",
  jsonc: "json",
  md: "markdown",
  markdown: "markdown",
  py: "python",
  rs: "rust",
  sql: "sql",
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "typescript",
  html: "xml",
  htm: "xml",
  xml: "xml",
  svg: "xml",
  yaml: "yaml",
  yml: "yaml",
};
const BY_NAME: Record<string, Language> = { dockerfile: "dockerfile", makefile: "makefile" };
const BY_TYPE: [RegExp, Language][] = [
  [/json/, "json"],
  [/yaml/, "yaml"],
  [/markdown/, "markdown"],
  [/(java|ecma)script/, "javascript"],
  [/typescript/, "typescript"],
  [/x-python/, "python"],
  [/x-sh|shellscript/, "bash"],
  [/sql/, "sql"],
  [/css/, "css"],
  [/html|xml/, "xml"],
  [/toml/, "ini"],
];

/** The language of a file from its name, then its content type; null (plain text) when unknown. */
export function languageOf(path: string, contentType = ""): Language | null {
  const base = (path.split("/").at(-1) ?? "").toLowerCase();
  const dot = base.lastIndexOf(".");
  const byName = dot > 0 ? BY_EXTENSION[base.slice(dot + 1)] : BY_NAME[base];
  if (byName) return byName;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return BY_TYPE.find(([pattern]) => pattern.test(type))?.[1] ?? null;
}

/**
 * Texts above this are shown as plain lines. Highlighting 256 KiB of TypeScript took 450-780 ms
 * here (2 cores, shared), all of it holding the event loop; 100 KB stays near a fifth of a second,
 * and a file that size is read by searching it, not by its colours.
 */
const MAX_HIGHLIGHT_BYTES = 100_000;

const TAG = /<span class="[^"]*">|<\/span>/g;

/**
 * Cuts highlight.js's markup into lines, each with its spans balanced: a span open at a line's end
 * (a comment or string over several lines) is closed there and opened again on the next line, so
 * each line is markup that stands alone in its own table cell.
 */
function splitLines(markup: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  for (const raw of markup.split("\n")) {
    let line = open.join("");
    let last = 0;
    for (const m of raw.matchAll(TAG)) {
      line += raw.slice(last, m.index) + m[0];
      last = m.index + m[0].length;
      if (m[0] === "</span>") open.pop();
      else open.push(m[0]);
    }
    lines.push(line + raw.slice(last) + "</span>".repeat(open.length));
  }
  return lines;
}

/**
 * The lines of a text as markup, highlighted as `language` when it is known and the text is not
 * too large, else escaped plain lines. A trailing newline ends the last line (it adds none).
 */
export function highlightLines(text: string, language: Language | null): Html[] {
  const lines = text.endsWith("\n") ? text.slice(0, -1) : text;
  if (language === null || text.length > MAX_HIGHLIGHT_BYTES)
    return lines.split("\n").map((l) => trusted(escapeHtml(l)));
  // highlight.js escapes every character of the text it is given (& < > " '), and adds only its own
  // <span class="hljs-…"> tags, so its output is markup this service vouches for.
  const markup = highlighter.get().highlightMarkup(lines, language);
  return splitLines(markup).map(trusted);
}

/** Markup of a scalar of a data file's structure, with the highlighter's classes for its kind. */
export function scalarMarkup(kind: "string" | "number" | "literal" | "attr", text: string): Html {
  return html`<span class="hljs-${kind}">${text}</span>`;
}
