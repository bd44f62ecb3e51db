import { parsePatch, structuredPatch } from "diff";
import { z } from "zod";
import { type DocumentDiff, structureBudget } from "../../../shared/documents/changes.ts";
import { type Html, html } from "../html.ts";
import { changedPathsTable } from "./changed-paths.ts";
import { highlightLines, type Language, languageOf } from "./highlight.ts";

/**
 * The one renderer of file changes, used by every page that shows a diff (commit, branch,
 * proposal, compare): a summary with the counts, a list of the files, and each file's diff with
 * line numbers on both sides, unified or split (side by side), highlighted like the file page.
 * Large and binary files never hang a page: a file over MAX_FILE_ROWS rows, or any file once the
 * page has shown MAX_PAGE_ROWS, says "Large diff not shown" and links to its own diff or its text.
 */

export type DiffLayout = "unified" | "split";
const diffLayouts = ["unified", "split"] as const;
/** The `view` query parameter of every page that shows a diff. */
export const diffLayoutParam = z.enum(diffLayouts).default("unified");

/** A side of a change that has no text to diff: binary bytes, or text above what is read. */
export interface Unreadable {
  binary: boolean;
  /** Its size in bytes, when known. */
  size?: number;
}

/**
 * One changed file, the input of `renderChanges`. Give either both sides' texts (`before` and
 * `after`) or the unified diff the service already made (`patch`, as `diffBranch` returns it).
 */
export interface FileChange {
  path: string;
  status: "added" | "modified" | "deleted";
  /** The text before the change; null for an added file; `Unreadable` for binary or too large. */
  before?: string | null | Unreadable;
  /** The text after the change; null for a deleted file; `Unreadable` for binary or too large. */
  after?: string | null | Unreadable;
  /** Instead of the texts: a unified diff, "" when none was made (binary, too large, too many edits). */
  patch?: string;
  /** With `patch`: whether either side is binary. */
  binary?: boolean;
  /**
   * A JSON or YAML file's changed places, shown as a "changed paths" table above the text diff;
   * with `patch` as `GET diff` gives them, with texts found from the texts when not given.
   */
  structure?: DocumentDiff | undefined;
  /** The file's content type, to pick its highlighting when its name does not say. */
  contentType?: string;
  /** The file's page at the new side (none for a deleted file), its text (raw view), its diff alone. */
  links?: { file?: string | undefined; raw?: string | undefined; alone?: string | undefined };
  /** Markup shown under the file's diff (the comments on it, on a branch page). */
  below?: Html;
}

export interface DiffOptions {
  layout: DiffLayout;
  /** The URL of this page in the other layout, for the toggle link. */
  layoutHref: (layout: DiffLayout) => string;
  /** Show every row of each file however large (the page of one file's diff). */
  whole?: boolean;
}

/** Rows of one file before the file is cut as "large": a few screens of a long review. */
const MAX_FILE_ROWS = 1_500;
/** Rows of a whole page: beyond this, further files link to their own diff. */
const MAX_PAGE_ROWS = 5_000;
/** Both texts of a file together up to this are highlighted whole (about 40 ms here). */
const WHOLE_TEXT_HIGHLIGHT = 20_000;
/** See shared/commits/diff.ts: the diff costs about the square of the edits; bounded, it is fast. */
const MAX_DIFF_EDITS = 1_000;

interface Hunk {
  oldStart: number;
  newStart: number;
  lines: string[];
}

type Row =
  | { kind: "hunk"; header: string }
  | { kind: "ctx" | "add" | "del"; old: number | null; new: number | null };

interface Prepared {
  change: FileChange;
  structure: DocumentDiff | null;
  hunks: Hunk[] | null;
  added: number;
  removed: number;
  binary: Unreadable | null;
  oldLine: (n: number) => Html;
  newLine: (n: number) => Html;
}

const isText = (side: FileChange["before"]): side is string | null | undefined =>
  side === null || side === undefined || typeof side === "string";

/** The lines of each side that a patch's hunks show, highlighted hunk by hunk (a patch has no more). */
function patchSides(hunks: Hunk[], language: Language | null) {
  const old = new Map<number, Html>();
  const now = new Map<number, Html>();
  for (const h of hunks) {
    const oldText = h.lines.filter((l) => l[0] === " " || l[0] === "-").map((l) => l.slice(1));
    const newText = h.lines.filter((l) => l[0] === " " || l[0] === "+").map((l) => l.slice(1));
    for (const [i, l] of highlightLines(oldText.join("\n"), language).entries()) old.set(h.oldStart + i, l);
    for (const [i, l] of highlightLines(newText.join("\n"), language).entries()) now.set(h.newStart + i, l);
  }
  return { oldLine: (n: number) => old.get(n) ?? html``, newLine: (n: number) => now.get(n) ?? html`` };
}

/** Every line of a text with one sign: the whole text added, or removed. */
function wholeHunk(text: string, sign: "+" | "-"): Hunk[] {
  if (text === "") return [];
  const lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n").map((l) => sign + l);
  return [{ oldStart: sign === "-" ? 1 : 0, newStart: sign === "+" ? 1 : 0, lines }];
}

/**
 * The hunks between two texts; null when they differ by more than MAX_DIFF_EDITS lines. An added
 * or emptied file needs no comparison, so it is never too large to count (only to show).
 */
function hunksOf(before: string, after: string): Hunk[] | null {
  if (before === "") return wholeHunk(after, "+");
  if (after === "") return wholeHunk(before, "-");
  const patch = structuredPatch("a", "b", before, after, "", "", {
    context: 3,
    maxEditLength: MAX_DIFF_EDITS,
  });
  return patch?.hunks ?? null;
}

type Sides = Pick<Prepared, "oldLine" | "newLine">;

/** Sides highlighted only once a row is rendered: a file not shown (too large) costs nothing. */
function lazySides(make: () => Sides): Sides {
  let made: Sides | undefined;
  const sides = () => {
    made ??= make();
    return made;
  };
  return { oldLine: (n) => sides().oldLine(n), newLine: (n) => sides().newLine(n) };
}

/**
 * The lines of both texts for a diff. Small texts are highlighted whole, so a comment or string
 * opened above a hunk is coloured right; larger ones hunk by hunk, so the cost follows the rows
 * shown (at most MAX_PAGE_ROWS a page) rather than the size of every file changed.
 */
function textSides(before: string, after: string, hunks: Hunk[], language: Language | null) {
  if (before.length + after.length > WHOLE_TEXT_HIGHLIGHT) return patchSides(hunks, language);
  const oldLines = highlightLines(before, language);
  const newLines = highlightLines(after, language);
  return {
    oldLine: (n: number) => oldLines[n - 1] ?? html``,
    newLine: (n: number) => newLines[n - 1] ?? html``,
  };
}

/** Characters of JSON and YAML text a page reads for changed paths, as `GET diff` does. */
const MAX_STRUCTURED_CHARS_PER_PAGE = 524_288;

type StructureOf = ReturnType<typeof structureBudget>;

/** The changed places of a change given by its texts (none for a patch, or a side not read). */
function structureOfTexts(change: FileChange, structureOf: StructureOf): DocumentDiff | null {
  const { path, patch, before, after } = change;
  if (patch !== undefined || !isText(before) || !isText(after)) return null;
  return structureOf(path, before ?? null, after ?? null);
}

function prepare(change: FileChange, structureOf: StructureOf): Prepared {
  const language = languageOf(change.path, change.contentType);
  const empty = () => html``;
  const none: Sides = { oldLine: empty, newLine: empty };
  let hunks: Hunk[] | null = null;
  let lines = none;
  let binary: Unreadable | null = null;
  if (change.patch !== undefined) {
    if (change.binary) binary = { binary: true };
    else if (change.patch !== "") hunks = parsePatch(change.patch)[0]?.hunks ?? [];
    const found = hunks;
    if (found) lines = lazySides(() => patchSides(found, language));
  } else {
    const { before, after } = change;
    if (isText(before) && isText(after)) {
      hunks = hunksOf(before ?? "", after ?? "");
      const found = hunks;
      if (found) lines = lazySides(() => textSides(before ?? "", after ?? "", found, language));
    } else {
      const unreadable = [before, after].find((s): s is Unreadable => !isText(s));
      binary = unreadable?.binary ? unreadable : null;
    }
  }
  const count = (sign: string) =>
    hunks?.reduce((n, h) => n + h.lines.filter((l) => l[0] === sign).length, 0) ?? 0;
  const structure = change.structure ?? structureOfTexts(change, structureOf);
  return { change, structure, hunks, added: count("+"), removed: count("-"), binary, ...lines };
}

/** A hunk's lines as rows with their numbers on each side ("\ No newline" notes are left out). */
function rowsOf(hunks: Hunk[]): Row[] {
  const rows: Row[] = [];
  for (const h of hunks) {
    rows.push({ kind: "hunk", header: `@@ -${h.oldStart} +${h.newStart} @@` });
    let old = h.oldStart;
    let now = h.newStart;
    for (const l of h.lines) {
      if (l[0] === "+") rows.push({ kind: "add", old: null, new: now++ });
      else if (l[0] === "-") rows.push({ kind: "del", old: old++, new: null });
      else if (l[0] === " ") rows.push({ kind: "ctx", old: old++, new: now++ });
    }
  }
  return rows;
}

const num = (n: number | null) => html`<td class="n">${n ?? ""}</td>`;

function unifiedTable(p: Prepared, rows: Row[]): Html {
  return html`<table class="lines diff unified"><tbody>${rows.map((r) =>
    r.kind === "hunk"
      ? html`<tr class="hunk"><td class="n"></td><td class="n"></td><td>${r.header}</td></tr>`
      : html`<tr class="${r.kind}">${num(r.old)}${num(r.new)}<td class="code">${r.old !== null && r.kind !== "add" ? p.oldLine(r.old) : p.newLine(r.new ?? 0)}</td></tr>`,
  )}</tbody></table>`;
}

/** Side by side: context on both sides, a run of deletions paired line by line with the additions after it. */
function splitTable(p: Prepared, rows: Row[]): Html {
  const out: Html[] = [];
  const left = (n: number | null, kind: string) =>
    n === null
      ? html`<td class="n"></td><td class="empty"></td>`
      : html`${num(n)}<td class="code ${kind}">${p.oldLine(n)}</td>`;
  const right = (n: number | null, kind: string) =>
    n === null
      ? html`<td class="n"></td><td class="empty"></td>`
      : html`${num(n)}<td class="code ${kind}">${p.newLine(n)}</td>`;
  for (let i = 0; i < rows.length; ) {
    const r = rows[i] as Row;
    if (r.kind === "hunk") {
      out.push(html`<tr class="hunk"><td class="n"></td><td colspan="3">${r.header}</td></tr>`);
      i++;
    } else if (r.kind === "ctx") {
      out.push(html`<tr>${left(r.old, "ctx")}${right(r.new, "ctx")}</tr>`);
      i++;
    } else {
      const dels: number[] = [];
      const adds: number[] = [];
      for (; rows[i]?.kind === "del"; i++) dels.push((rows[i] as { old: number }).old);
      for (; rows[i]?.kind === "add"; i++) adds.push((rows[i] as { new: number }).new);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++)
        out.push(html`<tr>${left(dels[k] ?? null, "del")}${right(adds[k] ?? null, "add")}</tr>`);
    }
  }
  return html`<table class="lines diff split"><tbody>${out}</tbody></table>`;
}

const STATUS_LABEL = { added: "added", modified: "modified", deleted: "deleted" } as const;

function statusLabels(p: Prepared): Html {
  return html`<span class="status status-${p.change.status}">${STATUS_LABEL[p.change.status]}</span>${p.binary ? html` <span class="status status-binary">binary</span>` : ""}`;
}

const counts = (p: Prepared) =>
  p.hunks
    ? html`<span class="counts"><span class="added">+${p.added}</span> <span class="removed">&minus;${p.removed}</span></span>`
    : html``;

const sizeText = (size: number | undefined) =>
  size === undefined ? "?" : `${size.toLocaleString("en")} bytes`;

/** What stands in for a diff that is not shown: a binary file's sizes, or a link to see it. */
function notShown(p: Prepared, why: "binary" | "large" | "page-full" | "unread"): Html {
  const { links, before, after } = p.change;
  const see = html`${links?.alone ? html` <a href="${links.alone}">Load this file's diff</a>` : ""}${links?.raw ? html` <a href="${links.raw}">View the text</a>` : ""}`;
  if (why === "binary") {
    const side = (s: FileChange["before"]) => (s && typeof s === "object" ? sizeText(s.size) : "none");
    const sizes =
      before !== undefined || after !== undefined ? html` (${side(before)} &rarr; ${side(after)})` : "";
    return html`<p class="muted not-shown">Binary file${sizes}, not shown.</p>`;
  }
  if (why === "large") return html`<p class="muted not-shown">Large diff not shown.${see}</p>`;
  if (why === "page-full")
    return html`<p class="muted not-shown">Not shown: this page already shows many changed lines.${see}</p>`;
  return html`<p class="muted not-shown">No text diff: the file is too large or changed too much to compare.${links?.raw ? html` <a href="${links.raw}">View the text</a>` : ""}</p>`;
}

function fileSection(p: Prepared, index: number, options: DiffOptions, budget: { rows: number }): Html {
  const { path, links } = p.change;
  let body: Html;
  if (p.binary) body = notShown(p, "binary");
  else if (!p.hunks) body = notShown(p, "unread");
  else {
    const rows = rowsOf(p.hunks);
    const large = rows.length > MAX_FILE_ROWS;
    if (!options.whole && (large || budget.rows + rows.length > MAX_PAGE_ROWS))
      body = notShown(p, large ? "large" : "page-full");
    else {
      budget.rows += rows.length;
      body =
        rows.length === 0
          ? html`<p class="muted">No lines changed (an empty file, or a change of its type only).</p>`
          : options.layout === "split"
            ? splitTable(p, rows)
            : unifiedTable(p, rows);
    }
  }
  return html`<section class="file-diff" id="file-${index + 1}" aria-label="${path}">
<h3>${statusLabels(p)} ${links?.file ? html`<a href="${links.file}">${path}</a>` : path} ${counts(p)}</h3>
${p.structure ? changedPathsTable(p.structure) : ""}${body}${p.change.below ?? ""}</section>`;
}

function fileList(prepared: Prepared[]): Html {
  return html`<table class="diff-files"><caption>Files changed</caption><thead><tr><th scope="col">File</th><th scope="col">Status</th><th scope="col">Lines</th></tr></thead><tbody>
${prepared.map((p, i) => html`<tr><td><a href="#file-${i + 1}">${p.change.path}</a></td><td>${statusLabels(p)}</td><td>${p.hunks ? counts(p) : html`<span class="muted">not counted</span>`}</td></tr>`)}
</tbody></table>`;
}

function layoutToggle(options: DiffOptions): Html {
  const link = (layout: DiffLayout, label: string) =>
    layout === options.layout
      ? html`<a href="${options.layoutHref(layout)}" aria-current="true">${label}</a>`
      : html`<a href="${options.layoutHref(layout)}">${label}</a>`;
  return html`<span class="diff-layout">View: ${link("unified", "Unified")} · ${link("split", "Split")}</span>`;
}

/**
 * A list of file changes as a diff: the total counts and the layout toggle, the files with their
 * status and counts (each linking to its diff below), then each file's diff (or why it is not
 * shown). Files are rendered in the order given.
 */
export function renderChanges(changes: FileChange[], options: DiffOptions): Html {
  if (changes.length === 0) return html`<p class="muted">No changes.</p>`;
  const structureOf = structureBudget(MAX_STRUCTURED_CHARS_PER_PAGE);
  const prepared = changes.map((c) => prepare(c, structureOf));
  const added = prepared.reduce((n, p) => n + p.added, 0);
  const removed = prepared.reduce((n, p) => n + p.removed, 0);
  const budget = { rows: 0 };
  return html`<p class="diff-summary" id="diff-summary"><strong>${changes.length} ${changes.length === 1 ? "file" : "files"} changed</strong>, <span class="added">+${added}</span> <span class="removed">&minus;${removed}</span> · ${layoutToggle(options)}</p>
${fileList(prepared)}
${prepared.map((p, i) => fileSection(p, i, options, budget))}`;
}
