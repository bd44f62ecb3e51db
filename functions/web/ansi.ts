import { escapeHtml, type Html, trusted } from "./html.ts";

/**
 * Terminal output (a CI log) as HTML: the SGR escape sequences that colour it (`ESC [ … m`)
 * become `<span>`s with classes of the stylesheet (`ansi-fg-1`, `ansi-bold`, …), never an inline
 * style (the CSP allows none). The text between sequences is escaped like every other value;
 * every other escape sequence (cursor moves, titles) and control character is dropped, so no raw
 * escape byte reaches the page. 256-colour and RGB colours above the first 16 are dropped too: a
 * class per colour would be 256 rules for a rare case.
 */

interface Style {
  fg: number | null;
  bg: number | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
}

const plain: Style = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };

// CSI sequences (SGR ends in `m`), OSC strings (ended by BEL or ST), and lone two-byte escapes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point
const ESCAPE = /\x1b\[([0-9;:?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;

/** A 256-colour or RGB parameter list (`38;5;n`, `38;2;r;g;b`): its colour if one of the 16, and its length. */
function extended(codes: number[], i: number): { colour: number | null; used: number } {
  if (codes[i + 1] === 5) {
    const n = codes[i + 2] ?? -1;
    return { colour: n >= 0 && n < 16 ? n : null, used: 3 };
  }
  return { colour: null, used: codes[i + 1] === 2 ? 5 : 2 };
}

/** The style after one SGR sequence's parameters (`1;31`); an empty list resets, as `0` does. */
function applySgr(style: Style, params: string): Style {
  const codes = params === "" ? [0] : params.split(/[;:]/).map((p) => (p === "" ? 0 : Number(p)));
  let s = { ...style };
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i] ?? 0;
    if (c === 0) s = { ...plain };
    else if (c === 1) s.bold = true;
    else if (c === 2) s.dim = true;
    else if (c === 3) s.italic = true;
    else if (c === 4) s.underline = true;
    else if (c === 22) s = { ...s, bold: false, dim: false };
    else if (c === 23) s.italic = false;
    else if (c === 24) s.underline = false;
    else if (c >= 30 && c <= 37) s.fg = c - 30;
    else if (c >= 90 && c <= 97) s.fg = c - 90 + 8;
    else if (c === 39) s.fg = null;
    else if (c >= 40 && c <= 47) s.bg = c - 40;
    else if (c >= 100 && c <= 107) s.bg = c - 100 + 8;
    else if (c === 49) s.bg = null;
    else if (c === 38 || c === 48) {
      const { colour, used } = extended(codes, i);
      if (c === 38) s.fg = colour;
      else s.bg = colour;
      i += used - 1;
    }
  }
  return s;
}

function classesOf(s: Style): string {
  const names: string[] = [];
  if (s.fg !== null) names.push(`ansi-fg-${s.fg}`);
  if (s.bg !== null) names.push(`ansi-bg-${s.bg}`);
  if (s.bold) names.push("ansi-bold");
  if (s.dim) names.push("ansi-dim");
  if (s.italic) names.push("ansi-italic");
  if (s.underline) names.push("ansi-underline");
  return names.join(" ");
}

/** One stretch of text in one style, escaped. */
function run(classes: string, text: string): string {
  const safe = escapeHtml(text.replace(CONTROL, ""));
  if (safe === "") return "";
  return classes ? `<span class="${classes}">${safe}</span>` : safe;
}

/**
 * A line that a terminal redraws with carriage returns (a progress bar) shows what it ended as:
 * the text after its last `\r`.
 */
const redrawn = (text: string): string =>
  text
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => line.slice(line.lastIndexOf("\r") + 1))
    .join("\n");

/** Terminal output as escaped HTML with its colours as classes (for inside a `<pre>`). */
export function ansiToHtml(text: string): Html {
  const source = redrawn(text);
  let out = "";
  // Text is gathered while the style stays the same, so a sequence that changes nothing adds no span.
  let style = plain;
  let classes = "";
  let pending = "";
  let last = 0;
  for (const m of source.matchAll(ESCAPE)) {
    pending += source.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[2] !== "m") continue;
    style = applySgr(style, m[1] ?? "");
    const next = classesOf(style);
    if (next === classes) continue;
    out += run(classes, pending);
    [classes, pending] = [next, ""];
  }
  return trusted(out + run(classes, pending + source.slice(last)));
}
