/**
 * A small scanner for the string and template literals of a TypeScript file: enough of the
 * language (comments, strings, templates with nested `${}`, regular expressions) to find every
 * literal at the top level of the code and where it starts, without a full parser. The SQL
 * catalogue (sql-catalogue.ts) reads SQL out of them.
 */

/** A literal's text: plain chunks, and the source of each `${...}` in a template. */
export type Part = string | { expr: string };

export interface Literal {
  /** Offset of the opening quote or backtick. */
  start: number;
  parts: Part[];
}

const KEYWORDS_BEFORE_REGEX =
  /(?:^|[^\w$])(?:return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/;

/** True when a `/` at this point starts a regular expression rather than a division. */
function regexAllowed(source: string, at: number): boolean {
  const before = source.slice(0, at).trimEnd();
  if (before === "") return true;
  return /[(,=:[!&|?{};+\-*%<>~^]$/.test(before) || KEYWORDS_BEFORE_REGEX.test(before);
}

function skipRegex(source: string, i: number): number {
  let inClass = false;
  for (i++; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "/" && !inClass) break;
    else if (c === "\n") break;
  }
  i++;
  while (/[a-z]/i.test(source[i] ?? "")) i++;
  return i;
}

function readQuoted(source: string, i: number): { end: number; text: string } {
  const quote = source[i];
  let text = "";
  for (i++; i < source.length && source[i] !== quote; i++) {
    if (source[i] === "\\") {
      const next = source[++i] ?? "";
      text += next === "n" ? "\n" : next === "t" ? "\t" : next;
    } else text += source[i];
  }
  return { end: i + 1, text };
}

/** Reads a template from its backtick; returns its parts and the offset after it. */
function readTemplate(source: string, i: number): { end: number; parts: Part[] } {
  const parts: Part[] = [];
  let chunk = "";
  for (i++; i < source.length && source[i] !== "`"; i++) {
    const c = source[i];
    if (c === "\\") {
      const next = source[++i] ?? "";
      chunk += next === "n" ? "\n" : next === "t" ? "\t" : next;
    } else if (c === "$" && source[i + 1] === "{") {
      parts.push(chunk);
      chunk = "";
      const end = scan(source, i + 2, () => {}, true);
      parts.push({ expr: source.slice(i + 2, end - 1).trim() });
      i = end - 1;
    } else chunk += c;
  }
  parts.push(chunk);
  return { end: i + 1, parts: parts.filter((p) => p !== "") };
}

/**
 * Walks code from `i`, reporting each literal to `found`. With `untilBrace`, stops after the `}`
 * that closes a template's `${` and returns the offset after it; literals inside are not reported.
 */
function scan(source: string, i: number, found: (l: Literal) => void, untilBrace = false): number {
  let depth = 0;
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === "/" && next === "/")
      i = source.indexOf("\n", i) === -1 ? source.length : source.indexOf("\n", i);
    else if (c === "/" && next === "*") i = source.indexOf("*/", i + 2) + 2;
    else if (c === '"' || c === "'") {
      const { end, text } = readQuoted(source, i);
      if (!untilBrace) found({ start: i, parts: [text] });
      i = end;
    } else if (c === "`") {
      const { end, parts } = readTemplate(source, i);
      if (!untilBrace) found({ start: i, parts });
      i = end;
    } else if (c === "/" && regexAllowed(source, i)) i = skipRegex(source, i);
    else {
      if (c === "{") depth++;
      if (c === "}" && depth-- === 0 && untilBrace) return i + 1;
      i++;
    }
  }
  return i;
}

/** Every literal at the top level of `source`, in order. */
export function literalsOf(source: string): Literal[] {
  const out: Literal[] = [];
  scan(source, 0, (l) => out.push(l));
  return out;
}
