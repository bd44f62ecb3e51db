/*
 * Block-style YAML read line by line, without parsing the document: what the narrowed merge of a
 * large file (yaml-narrow.ts) needs to know about the lines around a conflicting region, at a
 * cost of a few string operations per line. Anything this reading cannot vouch for is UNSAFE, and
 * the narrowed merge then gives up (the caller answers the line merge).
 */

/** A line this reading cannot vouch for: a tab in the indentation, a complex key, a tag. */
export const UNSAFE: unique symbol = Symbol("unsafe");

/** One line with content (not blank, not only a comment). */
export interface YamlLine {
  /** Leading spaces. */
  indent: number;
  /** Whether it is a sequence entry (`- ...` or `-` alone). */
  dash: boolean;
  /** The column of what follows the dash (the indent when there is none); -1 for a `-` alone. */
  col: number;
  /** The key at `col`, as the data names it (`"a"` and `a` are one key); absent if none. */
  key?: string;
  /** After the key's colon (or the entry's text when there is no key), its comment left out. */
  value: string;
}

export type Line = YamlLine | typeof UNSAFE | null;

/** Indicators that make a key or value more than this reading knows: anchors, tags, aliases, flow. */
const INDICATOR = /^[&!*{[|>%@`?]/;
/** Plain scalars the core schema reads as something else than a string (or a key whose text differs). */
const NOT_A_STRING = /^(?:[-+]?\.?\d|[-+]?\.(?:inf|nan)$|~$|<<$|(?:true|false|null)$)/i;
const INTEGER = /^[-+]?\d+$/;

/** Reads one line: null when it is blank or only a comment. */
export function readLine(text: string): Line {
  const line = text.endsWith("\n") ? text.slice(0, text.endsWith("\r\n") ? -2 : -1) : text;
  let indent = 0;
  while (line.charCodeAt(indent) === 32) indent++;
  const rest = line.slice(indent);
  if (rest === "" || rest.startsWith("#")) return null;
  if (rest.startsWith("\t")) return UNSAFE;
  if (rest !== "-" && !rest.startsWith("- "))
    return withKey(rest, { indent, dash: false, col: indent, value: "" });
  let col = indent + 1;
  while (line.charCodeAt(col) === 32) col++;
  const inner = line.slice(col);
  if (inner === "" || inner.startsWith("#")) return { indent, dash: true, col: -1, value: "" };
  if (inner === "-" || inner.startsWith("- ") || inner.startsWith("\t")) return UNSAFE;
  return withKey(inner, { indent, dash: true, col, value: "" });
}

/** The line with its key and value read from `text` (what starts at its column). */
function withKey(text: string, line: YamlLine): Line {
  const key = keyOf(text);
  if (key === UNSAFE) return UNSAFE;
  if (key === undefined) return { ...line, value: withoutComment(text) };
  return { ...line, key: key.name, value: withoutComment(text.slice(key.end).trim()) };
}

/** The key that opens `text` and where its colon ends, undefined when it opens none. */
function keyOf(text: string): { name: string; end: number } | undefined | typeof UNSAFE {
  const quote = text[0];
  if (quote === '"' || quote === "'") {
    const close = text.indexOf(quote, 1);
    if (close === -1) return undefined;
    const name = text.slice(1, close);
    const after = /^ *:(?:\s|$)/.exec(text.slice(close + 1));
    if (!after) return undefined;
    // Escapes and doubled quotes would need the YAML reader to name the key.
    if ((quote === '"' && name.includes("\\")) || text[close + 1] === "'") return UNSAFE;
    return { name, end: close + 1 + after[0].length };
  }
  const colon = /:(?:\s|$)/.exec(text);
  if (!colon || text.slice(0, colon.index).includes(" #")) return undefined;
  const name = text.slice(0, colon.index).trimEnd();
  if (INDICATOR.test(text)) return UNSAFE;
  if (INTEGER.test(name)) return { name: String(Number(name)), end: colon.index + 1 };
  if (NOT_A_STRING.test(name)) return UNSAFE;
  return { name, end: colon.index + 1 };
}

function withoutComment(value: string): string {
  if (value.startsWith("#")) return "";
  const comment = value.indexOf(" #");
  return (comment === -1 ? value : value.slice(0, comment)).trimEnd();
}

/**
 * An identity value as the value merge keys it (`identityOf` in values.ts): `s` and the string,
 * `n` and the number; undefined for a value that is neither (the element lacks the field); UNSAFE
 * for one this reading cannot name (escapes, tags, anchors, floats, a value on later lines).
 */
export function scalarId(value: string): string | undefined | typeof UNSAFE {
  if (value === "") return UNSAFE;
  const quote = value[0];
  if (quote === '"' || quote === "'") {
    const inner = value.slice(1, -1);
    if (value.length < 2 || !value.endsWith(quote) || inner.includes(quote) || inner.includes("\\"))
      return UNSAFE;
    return `s${inner}`;
  }
  if (INDICATOR.test(value)) return UNSAFE;
  if (INTEGER.test(value)) return `n${Number(value)}`;
  if (/^(?:~|null|true|false)$/i.test(value)) return undefined;
  if (NOT_A_STRING.test(value)) return UNSAFE;
  return `s${value}`;
}

/**
 * Whether a value opens something that goes on over the next lines at any indentation: a flow
 * collection or quoted scalar not closed on its line. (A block scalar or nested block has its lines
 * indented deeper, which is what this reading follows.)
 */
export function opensFlow(value: string): boolean {
  const first = value[0];
  if (first === "{") return !value.endsWith("}");
  if (first === "[") return !value.endsWith("]");
  if (first === '"' || first === "'") return value.length < 2 || !value.endsWith(first);
  return false;
}

/** The lines of one version, each read (and its indentation measured) once when first asked for. */
export class Outline {
  readonly lines: readonly string[];
  /** Most lines of a large file are never read: a map, not an array as long as the file. */
  readonly #read = new Map<number, Line>();
  /** Each line's indentation plus 2 once measured (1: no content), 0 before. */
  readonly #indents: Int32Array;

  constructor(lines: readonly string[]) {
    this.lines = lines;
    this.#indents = new Int32Array(lines.length);
  }

  at(i: number): Line {
    let line = this.#read.get(i);
    if (line === undefined) {
      line = readLine(this.lines[i] ?? "");
      this.#read.set(i, line);
    }
    return line;
  }

  /** The indentation of line `i`, -1 when it has no content (a cheap look before reading it). */
  indent(i: number): number {
    const known = this.#indents[i] ?? 1;
    if (known !== 0) return known - 2;
    const text = this.lines[i] ?? "";
    let n = 0;
    while (text.charCodeAt(n) === 32) n++;
    const c = text.charCodeAt(n);
    // Blank (end, \n, \r) or a comment (#).
    const indent = Number.isNaN(c) || c === 10 || c === 13 || c === 35 ? -1 : n;
    this.#indents[i] = indent + 2;
    return indent;
  }
}
