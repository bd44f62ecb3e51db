import { diffArrays } from "diff";
import type { DocumentMerge } from "./result.ts";

/*
 * The one three-way merge of text by lines in Quire (diff3, as `git merge-file` does): the changes
 * each side made to the common base are found with the `diff` package; changes to different parts
 * of the base both apply, changes to the same or adjacent lines are a conflict. The server's merge
 * (index.ts) and the CLI's `quire pull` (cli/workcopy/merge3.ts) both read its regions.
 */

/** A region of the base one side replaced: base lines [baseStart, baseEnd) became side lines [sideStart, sideEnd). */
interface Hunk {
  side: "ours" | "theirs";
  baseStart: number;
  baseEnd: number;
  sideStart: number;
  sideEnd: number;
}

/** A stretch of the merge: lines both sides agree on, or a conflict with each side's lines. */
export type Region =
  | { kind: "clean"; lines: string[] }
  | { kind: "conflict"; baseStart: number; base: string[]; ours: string[]; theirs: string[] };

/**
 * Lines with their line ends kept, so a file without a final newline merges back as it was. A loop
 * over `indexOf` rather than `split(/(?<=\n)/)`: the look-behind took half of a megabyte's merge.
 */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf("\n", start);
    const next = end === -1 ? text.length : end + 1;
    lines.push(text.slice(start, next));
    start = next;
  }
  return lines;
}

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

/** The merge of `ours` and `theirs`, both edits of `base`, as clean and conflicting regions in order. */
export function diff3(base: string, ours: string, theirs: string): Region[] {
  const b = splitLines(base);
  const o = splitLines(ours);
  const t = splitLines(theirs);
  const out: Region[] = [];
  const clean = (lines: string[]) => {
    if (lines.length > 0) out.push({ kind: "clean", lines });
  };
  let at = 0;
  for (const group of groups([...hunksOf(b, o, "ours"), ...hunksOf(b, t, "theirs")])) {
    const start = Math.min(...group.map((h) => h.baseStart));
    const end = Math.max(...group.map((h) => h.baseEnd));
    clean(b.slice(at, start));
    at = end;
    const mine = group.filter((h) => h.side === "ours");
    const their = group.filter((h) => h.side === "theirs");
    const oursHere = sideLines(b, o, mine, start, end);
    const theirsHere = sideLines(b, t, their, start, end);
    if (their.length === 0 || sameLines(oursHere, theirsHere)) clean(oursHere);
    else if (mine.length === 0) clean(theirsHere);
    else
      out.push({
        kind: "conflict",
        baseStart: start,
        base: b.slice(start, end),
        ours: oursHere,
        theirs: theirsHere,
      });
  }
  clean(b.slice(at));
  return out;
}

/**
 * The text merge as a document merge: the merged text, or each conflicting region with the base
 * line it starts at (1-based) and the lines of the base and of each side there.
 */
export function mergeText(base: string, ours: string, theirs: string): DocumentMerge {
  if (ours === theirs || base === theirs) return { content: ours };
  if (base === ours) return { content: theirs };
  const regions = diff3(base, ours, theirs);
  const conflicts = regions.flatMap((r) =>
    r.kind === "conflict"
      ? [
          {
            path: "",
            line: r.baseStart + 1,
            base: r.base.join(""),
            ours: r.ours.join(""),
            theirs: r.theirs.join(""),
          },
        ]
      : [],
  );
  if (conflicts.length > 0) return { conflicts };
  return { content: regions.map((r) => (r.kind === "clean" ? r.lines.join("") : "")).join("") };
}
