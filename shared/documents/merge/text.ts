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

const sameLines = (a: string[], b: string[]) => a.length === b.length && a.every((l, i) => l === b[i]);

/** A line position in the three versions: line `b` of the base is line `o` of ours and `t` of theirs. */
export interface Position {
  b: number;
  o: number;
  t: number;
}

/**
 * A stretch of the line merge, from `start` to `end` on each side: `stable` where neither side
 * changed the base (so a position inside it is the same line on all three), `clean` where one
 * side's change (or the same change on both) is taken, `conflict` where the sides differ. `lines`
 * is what the merge writes there (none for a conflict).
 */
export interface Chunk {
  kind: "stable" | "clean" | "conflict";
  start: Position;
  end: Position;
  lines: string[];
}

/** The line merge of three versions already split into lines, as chunks in order. */
export function mergeChunks(b: string[], o: string[], t: string[]): Chunk[] {
  const out: Chunk[] = [];
  // Where the previous group ended on each side: the stable lines after it start there.
  let at: Position = { b: 0, o: 0, t: 0 };
  const stable = (bEnd: number) => {
    const n = bEnd - at.b;
    if (n > 0)
      out.push({
        kind: "stable",
        start: at,
        end: { b: bEnd, o: at.o + n, t: at.t + n },
        lines: b.slice(at.b, bEnd),
      });
  };
  for (const group of groups([...hunksOf(b, o, "ours"), ...hunksOf(b, t, "theirs")])) {
    const start = Math.min(...group.map((h) => h.baseStart));
    const end = Math.max(...group.map((h) => h.baseEnd));
    stable(start);
    const from = { b: start, o: at.o + start - at.b, t: at.t + start - at.b };
    const mine = group.filter((h) => h.side === "ours");
    const their = group.filter((h) => h.side === "theirs");
    const [oStart, oEnd] = sideRange(mine, from.o, start, end);
    const [tStart, tEnd] = sideRange(their, from.t, start, end);
    const oursHere = o.slice(oStart, oEnd);
    const theirsHere = t.slice(tStart, tEnd);
    at = { b: end, o: oEnd, t: tEnd };
    const chunk = { start: { b: start, o: oStart, t: tStart }, end: at };
    if (their.length === 0 || sameLines(oursHere, theirsHere))
      out.push({ kind: "clean", ...chunk, lines: oursHere });
    else if (mine.length === 0) out.push({ kind: "clean", ...chunk, lines: theirsHere });
    else out.push({ kind: "conflict", ...chunk, lines: [] });
  }
  stable(b.length);
  return out;
}

/** The lines [start, end) of a side for the base lines [baseStart, baseEnd) of a group, given its hunks there. */
function sideRange(
  hunks: Hunk[],
  unchangedStart: number,
  baseStart: number,
  baseEnd: number,
): [number, number] {
  const first = hunks[0];
  const last = hunks[hunks.length - 1];
  if (!first || !last) return [unchangedStart, unchangedStart + baseEnd - baseStart];
  return [first.sideStart - (first.baseStart - baseStart), last.sideEnd + (baseEnd - last.baseEnd)];
}

/** The merge of `ours` and `theirs`, both edits of `base`, as clean and conflicting regions in order. */
export function diff3(base: string, ours: string, theirs: string): Region[] {
  const b = splitLines(base);
  const o = splitLines(ours);
  const t = splitLines(theirs);
  return mergeChunks(b, o, t).flatMap((c): Region[] => {
    if (c.kind !== "conflict") return c.lines.length > 0 ? [{ kind: "clean", lines: c.lines }] : [];
    const base = b.slice(c.start.b, c.end.b);
    return [
      {
        kind: "conflict",
        baseStart: c.start.b,
        base,
        ours: o.slice(c.start.o, c.end.o),
        theirs: t.slice(c.start.t, c.end.t),
      },
    ];
  });
}

/**
 * The text merge as a document merge: the merged text, or each conflicting region with the base
 * line it starts at (1-based) and the lines of the base and of each side there.
 */
export function mergeText(base: string, ours: string, theirs: string): DocumentMerge {
  if (ours === theirs || base === theirs) return { content: ours };
  if (base === ours) return { content: theirs };
  const [b, o, t] = [splitLines(base), splitLines(ours), splitLines(theirs)];
  return answerOf(mergeChunks(b, o, t), b, o, t);
}

/** The line merge's chunks (of the versions split into lines) as a document merge. */
export function answerOf(chunks: Chunk[], b: string[], o: string[], t: string[]): DocumentMerge {
  const conflicts = chunks.flatMap((c) =>
    c.kind === "conflict"
      ? [
          {
            path: "",
            line: c.start.b + 1,
            base: b.slice(c.start.b, c.end.b).join(""),
            ours: o.slice(c.start.o, c.end.o).join(""),
            theirs: t.slice(c.start.t, c.end.t).join(""),
          },
        ]
      : [],
  );
  if (conflicts.length > 0) return { conflicts };
  return { content: chunks.map((c) => c.lines.join("")).join("") };
}
