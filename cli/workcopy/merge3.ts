import { diffArrays } from "diff";

/*
 * A three-way merge of text files by lines (diff3, as `git merge-file` does): the changes each side
 * made to the common base are found with the `diff` package; changes to different parts of the
 * base both apply, changes to the same or adjacent lines are a conflict, shown with markers.
 */

/** A region of the base one side replaced: base lines [baseStart, baseEnd) became side lines [sideStart, sideEnd). */
interface Hunk {
  side: "ours" | "theirs";
  baseStart: number;
  baseEnd: number;
  sideStart: number;
  sideEnd: number;
}

export interface MergeResult {
  text: string;
  /** How many conflict regions the text holds (0: merged cleanly). */
  conflicts: number;
}

/** Lines with their line ends kept, so a file without a final newline merges back as it was. */
export const splitLines = (text: string): string[] => (text === "" ? [] : text.split(/(?<=\n)/));

/** The regions of `base` that `side` changed, each maximal (a run of removals and additions). */
function hunksOf(base: string[], lines: string[], side: Hunk["side"]): Hunk[] {
  const hunks: Hunk[] = [];
  let b = 0;
  let s = 0;
  let open: Hunk | undefined;
  for (const part of diffArrays(base, lines)) {
    const n = part.count ?? part.value.length;
    if (!part.added && !part.removed) {
      if (open) hunks.push(open);
      open = undefined;
      b += n;
      s += n;
      continue;
    }
    open ??= { side, baseStart: b, baseEnd: b, sideStart: s, sideEnd: s };
    if (part.removed) b += n;
    else s += n;
    open.baseEnd = b;
    open.sideEnd = s;
  }
  if (open) hunks.push(open);
  return hunks;
}

/** Hunks of both sides grouped where they overlap or touch: each group is merged as one region. */
function groups(hunks: Hunk[]): Hunk[][] {
  const sorted = [...hunks].sort((x, y) => x.baseStart - y.baseStart || x.baseEnd - y.baseEnd);
  const out: Hunk[][] = [];
  let end = -1;
  for (const h of sorted) {
    const last = out[out.length - 1];
    // Touching counts as overlapping (as git does): two edits of adjacent lines need a person.
    if (last && h.baseStart <= end) {
      last.push(h);
      end = Math.max(end, h.baseEnd);
    } else {
      out.push([h]);
      end = h.baseEnd;
    }
  }
  return out;
}

/** What `side` holds for the base lines [start, end) of a group, given its hunks there. */
function sideLines(base: string[], lines: string[], hunks: Hunk[], start: number, end: number): string[] {
  const first = hunks[0];
  const last = hunks[hunks.length - 1];
  if (!first || !last) return base.slice(start, end);
  return lines.slice(first.sideStart - (first.baseStart - start), last.sideEnd + (end - last.baseEnd));
}

const sameLines = (a: string[], b: string[]) => a.length === b.length && a.every((l, i) => l === b[i]);
const closed = (lines: string[]) =>
  lines.map((l, i) => (i === lines.length - 1 && !l.endsWith("\n") ? `${l}\n` : l));

/**
 * Merges `ours` and `theirs`, both edits of `base`. A conflict region reads
 * `<<<<<<< local`, our lines, `=======`, their lines, `>>>>>>> <theirsLabel>`.
 */
export function merge3(base: string, ours: string, theirs: string, theirsLabel: string): MergeResult {
  const b = splitLines(base);
  const o = splitLines(ours);
  const t = splitLines(theirs);
  const out: string[] = [];
  let conflicts = 0;
  let at = 0;
  for (const group of groups([...hunksOf(b, o, "ours"), ...hunksOf(b, t, "theirs")])) {
    const start = Math.min(...group.map((h) => h.baseStart));
    const end = Math.max(...group.map((h) => h.baseEnd));
    out.push(...b.slice(at, start));
    at = end;
    const mine = group.filter((h) => h.side === "ours");
    const their = group.filter((h) => h.side === "theirs");
    const oursHere = sideLines(b, o, mine, start, end);
    const theirsHere = sideLines(b, t, their, start, end);
    if (their.length === 0 || sameLines(oursHere, theirsHere)) out.push(...oursHere);
    else if (mine.length === 0) out.push(...theirsHere);
    else {
      conflicts++;
      out.push("<<<<<<< local\n", ...closed(oursHere), "=======\n", ...closed(theirsHere));
      out.push(`>>>>>>> ${theirsLabel}\n`);
    }
  }
  out.push(...b.slice(at));
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
