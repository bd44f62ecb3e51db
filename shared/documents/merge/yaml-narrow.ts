import { formatPath } from "../path.ts";
import type { DocumentConflict, DocumentMerge } from "./result.ts";
import { answerOf, type Chunk, mergeChunks, type Position, splitLines } from "./text.ts";
import type { ValueMergeOptions } from "./values.ts";
import { MAX_STRUCTURED_YAML_BYTES, mergeYaml, tooLargeForYaml } from "./yaml.ts";
import {
  candidateFields,
  elementsOf,
  type Frame,
  framesOf,
  giveUp,
  identityOfElements,
  indexOf,
  type Kind,
  keysOf,
  safeAt,
  segmentsOf,
} from "./yaml-context.ts";
import { Outline, readLine, UNSAFE } from "./yaml-outline.ts";

/*
 * A YAML file past MAX_STRUCTURED_YAML_BYTES is merged by lines, and only the regions whose lines
 * conflict are merged by structure (docs/merge.md, "Large files"): each is widened to whole
 * entries of one block mapping or sequence whose enclosing lines no side changed, the three
 * slices are merged as small documents, and the merged slice replaces the conflict. Reading a
 * megabyte with the `yaml` package costs seconds; this reads a few lines around each conflict.
 * Whatever the lines cannot vouch for gives up, and the answer is the line merge's.
 */

type Side = "b" | "o" | "t";
const SIDES: readonly Side[] = ["b", "o", "t"];

/** Entries [start, end) of one collection, the same run of entries on all three sides. */
interface Slice {
  start: Position;
  end: Position;
  /** The column of its entries, removed before the merge and put back after. */
  col: number;
  kind: Kind;
}

/** Positions in the merge's order (all three lines move together between chunks). */
const before = (p: Position, q: Position) =>
  p.b < q.b || (p.b === q.b && (p.o < q.o || (p.o === q.o && p.t < q.t)));
const samePosition = (p: Position, q: Position) => p.b === q.b && p.o === q.o && p.t === q.t;
const within = (p: Position, q: Position) => p.b <= q.b && p.o <= q.o && p.t <= q.t;

/** A document marker or directive past the first line: a stream of documents, merged by lines. */
const STREAM = /\n(?:---|\.\.\.)(?:[ \t\r\n]|$)|(?:^|\n)%/;
/**
 * Whether an alias may be anywhere (a `*` after a space, a flow indicator or at the start, before a
 * name): the data under its anchor may be in a slice and the alias outside it. A `*` is rare in
 * YAML: looking at each one is much cheaper than a regular expression over the megabyte.
 */
function hasAlias(text: string): boolean {
  for (let i = text.indexOf("*"); i !== -1; i = text.indexOf("*", i + 1)) {
    const [prev, next] = [text[i - 1] ?? " ", text[i + 1] ?? " "];
    if (/[\s,[{]/.test(prev) && !/[\s,[\]{}]/.test(next)) return true;
  }
  return false;
}

class Narrowing {
  readonly #chunks: Chunk[];
  readonly #sides: Record<Side, Outline>;
  /** Line 1 when every version opens with `---`: the document's lines start after it. */
  readonly #floor: number;
  readonly #options: ValueMergeOptions;
  readonly #bound: number;
  readonly #base: string;

  constructor(
    base: string,
    chunks: Chunk[],
    lines: Record<Side, string[]>,
    options: ValueMergeOptions,
    bound: number,
  ) {
    this.#base = base;
    this.#chunks = chunks;
    this.#sides = { b: new Outline(lines.b), o: new Outline(lines.o), t: new Outline(lines.t) };
    const opens = SIDES.map((s) => /^---[ \t]*\r?\n$/.test(lines[s][0] ?? ""));
    this.#floor = opens.every(Boolean) ? 1 : 0;
    if (opens.some(Boolean) && this.#floor === 0) giveUp();
    this.#options = options;
    this.#bound = bound;
  }

  /** The merge with every conflicting region merged by structure. */
  merge(): DocumentMerge {
    const slices = this.#slices();
    const conflicts: DocumentConflict[] = [];
    const texts = slices.map((slice) => {
      const merged = this.#mergeSlice(slice);
      if ("conflicts" in merged) conflicts.push(...merged.conflicts);
      return "content" in merged ? merged.content : "";
    });
    if (conflicts.length > 0) return { conflicts };
    return { content: this.#assemble(slices, texts) };
  }

  /** Each conflict widened to a slice; slices that overlap are widened as one. */
  #slices(): Slice[] {
    const slices: Slice[] = [];
    for (const chunk of this.#chunks) {
      if (chunk.kind !== "conflict") continue;
      const last = slices[slices.length - 1];
      if (last && within(last.start, chunk.start) && within(chunk.end, last.end)) continue;
      let slice = this.#widen(chunk.start, chunk.end);
      for (let prev = slices.at(-1); prev && before(slice.start, prev.end); prev = slices.at(-1)) {
        slices.pop();
        slice = this.#widen(prev.start, before(prev.end, slice.end) ? slice.end : prev.end);
      }
      slices.push(slice);
    }
    return slices;
  }

  /**
   * The smallest run of whole entries of one collection holding [start, end) on every side: back
   * to the line that opens the first entry, on to the end of the last, and out to the parent's
   * column when a side's lines reach past it.
   */
  #widen(start: Position, end: Position): Slice {
    for (let round = 0; round < 10_000; round++) {
      const col = this.#column(start, end);
      const kind = this.#kindOf(start, end, col);
      let [s, e] = [start, end];
      for (const side of SIDES) {
        const from = this.#entryStart(side, start[side], end[side], col, kind);
        if (from && before(from, s)) s = from;
        const to = this.#entryEnd(side, end[side], col, kind);
        if (to && before(e, to)) e = to;
      }
      this.#checkSize(s, e);
      if (samePosition(s, start) && samePosition(e, end)) return { start, end, col, kind };
      [start, end] = [s, e];
    }
    return giveUp();
  }

  #checkSize(start: Position, end: Position): void {
    for (const side of SIDES) {
      let size = 0;
      const lines = this.#sides[side].lines;
      for (let i = start[side]; i < end[side]; i++) size += (lines[i] ?? "").length;
      if (size > this.#bound) giveUp();
    }
  }

  /** The least indentation of the lines with content in [start, end) on any side. */
  #column(start: Position, end: Position): number {
    let col = Number.POSITIVE_INFINITY;
    for (const side of SIDES)
      for (let i = start[side]; i < end[side]; i++) {
        const indent = this.#sides[side].indent(i);
        if (indent >= 0 && indent < col) col = indent;
      }
    return Number.isFinite(col) ? col : giveUp();
  }

  /** A mapping if a key line is at the column on some side, else a sequence. */
  #kindOf(start: Position, end: Position, col: number): Kind {
    let kind: Kind = "seq";
    for (const side of SIDES) {
      const outline = this.#sides[side];
      for (let i = start[side]; i < end[side]; i++) {
        if (outline.indent(i) !== col) continue;
        const line = safeAt(outline, i);
        if (line.dash) continue;
        if (line.key === undefined) giveUp();
        kind = "map";
      }
    }
    return kind;
  }

  /** Where the first entry of side's lines [from, to) starts, if before `from`. */
  #entryStart(side: Side, from: number, to: number, col: number, kind: Kind): Position | null {
    const outline = this.#sides[side];
    let first = from;
    while (first < to && outline.indent(first) < 0) first++;
    if (first === to) return null;
    if (outline.indent(first) === col && opensEntry(safeAt(outline, first).dash, kind)) return null;
    for (let j = first - 1; j >= this.#floor; j--) {
      const indent = outline.indent(j);
      if (indent < 0 || indent > col) continue;
      // A `- ` at the column under a key of the mapping belongs to that key: look further back.
      if (indent === col && kind === "map" && safeAt(outline, j).dash) continue;
      return this.#positionAt(side, j, "start");
    }
    return giveUp();
  }

  /** Where the last entry that side's lines before `from` end in ends, if after `from`. */
  #entryEnd(side: Side, from: number, col: number, kind: Kind): Position | null {
    const outline = this.#sides[side];
    let last = -1;
    for (let k = from; k < outline.lines.length; k++) {
      const indent = outline.indent(k);
      if (indent < 0) continue;
      const inside = indent > col || (indent === col && kind === "map" && safeAt(outline, k).dash);
      if (!inside) break;
      last = k;
    }
    return last === -1 ? null : this.#positionAt(side, last, "end");
  }

  /** The position before (start) or after (end) a side's line, out to its chunk if that changed. */
  #positionAt(side: Side, line: number, edge: "start" | "end"): Position {
    const chunk = this.#chunkOf(side, line);
    if (chunk.kind !== "stable") return edge === "start" ? chunk.start : chunk.end;
    const at = line - chunk.start[side] + (edge === "end" ? 1 : 0);
    return { b: chunk.start.b + at, o: chunk.start.o + at, t: chunk.start.t + at };
  }

  /** The chunk holding a side's line (a binary search: chunks are in order on every side). */
  #chunkOf(side: Side, line: number): Chunk {
    let [lo, hi] = [0, this.#chunks.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.#chunks[mid] as Chunk).start[side] <= line) lo = mid;
      else hi = mid - 1;
    }
    const chunk = this.#chunks[lo] as Chunk;
    return chunk.end[side] > line ? chunk : giveUp();
  }

  /** The base line a side's line is, if no side changed it (else the enclosing lines differ). */
  #baseLine(side: Side, line: number): number {
    if (line < this.#floor) return line;
    const chunk = this.#chunkOf(side, line);
    return chunk.kind === "stable" ? chunk.start.b + line - chunk.start[side] : giveUp();
  }

  /**
   * The slice merged as a document of its own, with conflict paths from the root of the file, or
   * a give-up when the slice's merge might not be the whole document's.
   */
  #mergeSlice(slice: Slice): DocumentMerge {
    const { prefix, offsets } = this.#context(slice);
    const [b, o, t] = SIDES.map((side) => this.#cut(side, slice));
    const merged = mergeYaml(b ?? "", o ?? "", t ?? "", this.#options);
    if (merged === null) return giveUp();
    if ("content" in merged) return { content: this.#indented(merged.content, slice) };
    // A conflict of the slice as a whole, or of its lines, is not a place in the file's data.
    if (merged.conflicts.some((c) => c.path === "" || c.line !== undefined)) giveUp();
    const at = (c: DocumentConflict) => {
      // An element's path is its index on ours, or on theirs when ours deleted it (values.ts).
      const offset = /^\[\d+\]$/.test(c.path) && !("ours" in c) ? offsets.t : offsets.o;
      const path =
        slice.kind === "seq" ? c.path.replace(/^\[(\d+)\]/, (_, n) => `[${Number(n) + offset}]`) : c.path;
      return prefix === "" ? path : path.startsWith("[") ? prefix + path : `${prefix}.${path}`;
    };
    return { conflicts: merged.conflicts.map((c) => ({ ...c, path: at(c) })) };
  }

  /**
   * The path of the slice's collection, and for a sequence the index on ours of its first entry.
   * Gives up unless the enclosing lines are the same lines of the base on all sides, and the value
   * merge would come down to this collection and merge it entry by entry as the slice's merge does.
   */
  #context(slice: Slice): { prefix: string; offsets: { o: number; t: number } } {
    const frames = SIDES.map((side) =>
      framesOf(this.#sides[side], this.#floor, slice.start[side], slice.kind, slice.col),
    ) as [Frame[], Frame[], Frame[]];
    const [, ours] = frames;
    if (frames.some((f) => f.length !== ours.length)) giveUp();
    for (let i = 0; i < ours.length; i++) {
      const shape = (f: Frame[]) => `${f[i]?.kind}${f[i]?.col}`;
      if (frames.some((f) => shape(f) !== shape(ours))) giveUp();
      const parents = SIDES.map((side, s) => {
        const frame = frames[s]?.[i];
        return frame ? this.#baseLine(side, frame.parent) : giveUp();
      });
      if (parents.some((p) => p !== parents[0])) giveUp();
      if (i > 0 && ours[i]?.kind === "seq") this.#checkElement(frames.map((f) => f[i] as Frame));
    }
    const slot = frames.map((f) => f[0] as Frame);
    if (slice.kind === "map") this.#checkKeys(slice, slot);
    else this.#checkEntries(slice, slot);
    const offsets = {
      o: slice.kind === "seq" ? indexOf(this.#sides.o, slot[1] as Frame, slice.start.o) : 0,
      t: slice.kind === "seq" ? indexOf(this.#sides.t, slot[2] as Frame, slice.start.t) : 0,
    };
    const segments = [...ours].reverse().flatMap((f) => segmentsOf(this.#sides.o, f));
    return { prefix: formatPath(segments), offsets };
  }

  /** A sequence above the slice: merged by identity, its element the same one on all sides. */
  #checkElement(frames: Frame[]): void {
    const fields = candidateFields(this.#options.identity);
    const elements = SIDES.map((side, s) => elementsOf(this.#sides[side], frames[s] as Frame, fields));
    const field = identityOfElements(elements, fields) ?? giveUp();
    const ids = elements.map((es, s) => es.find((e) => e.line === frames[s]?.element)?.ids.get(field));
    if (ids[0] === undefined || ids.some((id) => id !== ids[0])) giveUp();
  }

  /** A mapping: the slice's keys are nowhere else in it, on any side (a key moved across is not merged here). */
  #checkKeys(slice: Slice, frames: Frame[]): void {
    const keys = SIDES.map((side, s) =>
      keysOf(this.#sides[side], frames[s] as Frame, slice.start[side], slice.end[side]),
    );
    const inSlice = new Set(keys.flatMap((k) => k.filter(([, inside]) => inside).map(([key]) => key)));
    if (keys.some((k) => k.some(([key, inside]) => !inside && inSlice.has(key)))) giveUp();
  }

  /**
   * A sequence: merged by identity both whole and in the slice, with the same field, and no element
   * both in and out of the slice.
   */
  #checkEntries(slice: Slice, frames: Frame[]): void {
    const fields = candidateFields(this.#options.identity);
    const all = SIDES.map((side, s) => elementsOf(this.#sides[side], frames[s] as Frame, fields));
    const inside = (side: Side, line: number) => line >= slice.start[side] && line < slice.end[side];
    const sliced = all.map((es, s) => es.filter((e) => inside(SIDES[s] as Side, e.line)));
    const field = identityOfElements(all, fields);
    if (field === undefined || identityOfElements(sliced, fields) !== field) giveUp();
    const inSlice = new Set(sliced.flatMap((es) => es.map((e) => e.ids.get(field))));
    const outside = all.some((es, s) =>
      es.some((e) => !inside(SIDES[s] as Side, e.line) && inSlice.has(e.ids.get(field))),
    );
    if (outside) giveUp();
  }

  /**
   * A side's lines of the slice, its column removed; an empty collection when the side has none
   * there (it deleted the entries, or the other side added them), so it reads as the data does.
   */
  #cut(side: Side, slice: Slice): string {
    const outline = this.#sides[side];
    let content = false;
    for (let i = slice.start[side]; i < slice.end[side] && !content; i++) content = outline.indent(i) >= 0;
    if (!content) return slice.kind === "map" ? "{}\n" : "[]\n";
    const lines = outline.lines.slice(slice.start[side], slice.end[side]);
    // The merged slice is written with \n: in a file of \r\n lines it would mix them.
    if (lines.some((line) => line.endsWith("\r\n"))) giveUp();
    return lines.map((line) => line.slice(Math.min(slice.col, leadingSpaces(line)))).join("");
  }

  /** The merged slice at its column again; gives up unless it is entries of the slice's kind. */
  #indented(content: string, slice: Slice): string {
    const lines = splitLines(content);
    const first = lines.map(readLine).find((l) => l !== null);
    if (!first || first === UNSAFE || first.indent !== 0 || !opensEntry(first.dash, slice.kind)) giveUp();
    if (!content.endsWith("\n")) giveUp();
    const pad = " ".repeat(slice.col);
    return lines.map((line) => (line === "\n" || line === "\r\n" ? line : pad + line)).join("");
  }

  /** The line merge with each slice replaced by its merged text. */
  #assemble(slices: Slice[], texts: string[]): string {
    const out: string[] = [];
    // Where each base line starts: a run of stable lines is then one slice of the base's text.
    const lines = this.#sides.b.lines;
    const offsets = new Int32Array(lines.length + 1);
    for (let i = 0; i < lines.length; i++)
      offsets[i + 1] = (offsets[i] as number) + (lines[i] as string).length;
    const last = this.#chunks[this.#chunks.length - 1];
    const end = last ? last.end : { b: 0, o: 0, t: 0 };
    let from: Position = { b: 0, o: 0, t: 0 };
    slices.forEach((slice, i) => {
      this.#linesBetween(from, slice.start, offsets, out);
      out.push(texts[i] ?? "");
      from = slice.end;
    });
    this.#linesBetween(from, end, offsets, out);
    return out.join("");
  }

  /** The line merge's text from `from` to `to`, both at chunk edges or inside stable chunks. */
  #linesBetween(from: Position, to: Position, offsets: Int32Array, out: string[]): void {
    for (const chunk of this.#chunks) {
      if (chunk.kind === "stable") {
        const [lo, hi] = [Math.max(chunk.start.b, from.b), Math.min(chunk.end.b, to.b)];
        if (lo < hi) out.push(this.#base.slice(offsets[lo], offsets[hi]));
      } else if (within(from, chunk.start) && within(chunk.end, to)) {
        if (chunk.kind === "conflict") giveUp();
        out.push(...chunk.lines);
      }
    }
  }
}

const opensEntry = (dash: boolean, kind: Kind) => dash === (kind === "seq");

function leadingSpaces(line: string): number {
  let n = 0;
  while (line.charCodeAt(n) === 32) n++;
  return n;
}

/** A merge answer with how it was reached. */
export type YamlFileMerge = DocumentMerge & { merged_as: "yaml" | "text" };

/**
 * The merge of a YAML file: by structure up to `bound` characters a side, past it by lines with
 * each conflicting region merged by structure when the lines around it allow (`merged_as: yaml`,
 * even if the rest merged by lines), else the line merge (`merged_as: text`). `bound` is a
 * parameter for the tests, which compare both paths on the same documents; null when a side
 * under the bound does not parse (the caller merges by lines).
 */
export function mergeYamlFile(
  base: string,
  ours: string,
  theirs: string,
  options: ValueMergeOptions = {},
  bound = MAX_STRUCTURED_YAML_BYTES,
): YamlFileMerge | null {
  if (!tooLargeForYaml([base, ours, theirs], bound)) {
    const merged = mergeYaml(base, ours, theirs, options);
    return merged && { ...merged, merged_as: "yaml" };
  }
  const lines = { b: splitLines(base), o: splitLines(ours), t: splitLines(theirs) };
  const chunks = mergeChunks(lines.b, lines.o, lines.t);
  const byLines = answerOf(chunks, lines.b, lines.o, lines.t);
  if ("content" in byLines) return { ...byLines, merged_as: "text" };
  if ([base, ours, theirs].some((text) => STREAM.test(text) || hasAlias(text)))
    return { ...byLines, merged_as: "text" };
  try {
    return { ...new Narrowing(base, chunks, lines, options, bound).merge(), merged_as: "yaml" };
  } catch {
    // A give-up, or anything unforeseen in a file's lines: the answer is the line merge, never a 500.
    return { ...byLines, merged_as: "text" };
  }
}
