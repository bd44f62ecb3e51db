import type { DocumentMerge } from "./result.ts";
import { mergeText } from "./text.ts";
import { equal, mergeValues, type ValueMergeOptions } from "./values.ts";

/** Above this size the merge is not compared with the line merge for layout (see `mergeJson`). */
export const LARGE_JSON_BYTES = 256 * 1024;

/** How a JSON file is written: its indentation, line ends and whether it ends with one. */
interface JsonStyle {
  indent: string;
  eol: string;
  finalNewline: boolean;
}

/** The style of `text`: the first indented line's indentation (none: one line), CRLF if it uses it. */
function styleOf(text: string): JsonStyle {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? "";
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  return { indent, eol, finalNewline: /\n$/.test(text) };
}

function write(value: unknown, style: JsonStyle): string {
  const body = JSON.stringify(value, null, style.indent);
  const text = style.eol === "\n" ? body : body.replaceAll("\n", style.eol);
  return style.finalNewline ? text + style.eol : text;
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The structural merge of three JSON texts, or null when one does not parse (the caller merges
 * them as text). The result is written in the base's style; when the base is not written the way
 * `JSON.stringify` would write it (aligned values, `1.0`, a key order of its own), the line merge
 * is taken instead if it is clean and means the same data, so every untouched line stays as it was.
 */
export function mergeJson(
  base: string,
  ours: string,
  theirs: string,
  options: ValueMergeOptions = {},
): DocumentMerge | null {
  const parsed = [parse(base), parse(ours), parse(theirs)];
  const values = parsed.flatMap((p) => (p.ok ? [p.value] : []));
  if (values.length < 3) return null;
  const [b, o, t] = values;
  const merged = mergeValues(b, o, t, options);
  if ("conflicts" in merged) return merged;
  const style = styleOf(base);
  // Writing the base again to compare costs as much as writing the merge: above LARGE_JSON_BYTES
  // the merge is written in the base's style without that check.
  if (base.length <= LARGE_JSON_BYTES && write(b, style) !== base) {
    const lines = mergeText(base, ours, theirs);
    if ("content" in lines) {
      const reread = parse(lines.content);
      if (reread.ok && equal(reread.value, merged.value)) return lines;
    }
  }
  return { content: write(merged.value, style) };
}
