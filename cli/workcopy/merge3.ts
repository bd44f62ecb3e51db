import { diff3 } from "../../shared/documents/merge/text.ts";

/*
 * The working copy's three-way merge of text files (`quire pull`): the server's line diff3
 * (shared/documents/merge/text.ts), with each conflict written into the file between markers.
 */

export interface MergeResult {
  text: string;
  /** How many conflict regions the text holds (0: merged cleanly). */
  conflicts: number;
}

const closed = (lines: string[]) =>
  lines.map((l, i) => (i === lines.length - 1 && !l.endsWith("\n") ? `${l}\n` : l));

/**
 * Merges `ours` and `theirs`, both edits of `base`. A conflict region reads
 * `<<<<<<< local`, our lines, `=======`, their lines, `>>>>>>> <theirsLabel>`.
 */
export function merge3(base: string, ours: string, theirs: string, theirsLabel: string): MergeResult {
  const out: string[] = [];
  let conflicts = 0;
  for (const region of diff3(base, ours, theirs)) {
    if (region.kind === "clean") {
      out.push(...region.lines);
      continue;
    }
    conflicts++;
    out.push("<<<<<<< local\n", ...closed(region.ours), "=======\n", ...closed(region.theirs));
    out.push(`>>>>>>> ${theirsLabel}\n`);
  }
  return { text: out.join(""), conflicts };
}

/** Whether bytes are text a line merge may touch: valid UTF-8 without NUL bytes (git's test, roughly). */
export function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Whether a file still holds conflict markers this merge wrote. */
export const hasConflictMarkers = (text: string): boolean =>
  /^<<<<<<< local$/m.test(text) && /^>>>>>>> /m.test(text);
