import type { PathSegment } from "../path.ts";
import { IDENTITY_FIELDS } from "./values.ts";
import { type Outline, opensFlow, scalarId, UNSAFE, type YamlLine } from "./yaml-outline.ts";

/*
 * What must hold around a slice of a large YAML file for its merge by structure to be the merge the
 * whole document would get (yaml-narrow.ts), read from the lines of each version: the chain of
 * collections that encloses it, up to the root, and what the value merge would decide at each.
 */

/** The narrowed merge cannot vouch for the answer: the caller answers the line merge. */
export class GiveUp extends Error {}

export function giveUp(): never {
  throw new GiveUp();
}

export type Kind = "map" | "seq";

/**
 * One collection on the way from a slice to the root: a block mapping or sequence whose entries
 * are at column `col`, opened by line `parent` (-1 or the `---` line: the document's root).
 */
export interface Frame {
  kind: Kind;
  col: number;
  parent: number;
  /** The key whose value the collection is, when `parent` is that key's line. */
  key?: string;
  /** For a sequence above the slice: the dash line of the element the slice is in. */
  element?: number;
}

/** Line `i`, which must be one this reading can vouch for. */
export function safeAt(outline: Outline, i: number): YamlLine {
  const line = outline.at(i);
  if (line === UNSAFE || line === null) giveUp();
  return line;
}

/**
 * The line that opens the collection of `kind` whose entries at column `col` include the line
 * `from` (searching from the line before it): the nearest line less indented, or for a sequence
 * a key line at the same column (`key:` then `- a`, the compact style).
 */
function parentOf(outline: Outline, floor: number, from: number, kind: Kind, col: number): number {
  for (let j = from - 1; j >= floor; j--) {
    const indent = outline.indent(j);
    if (indent < 0 || indent > col) continue;
    if (indent < col) return j;
    if (kind === "seq" && !safeAt(outline, j).dash) return j;
  }
  return floor - 1;
}

/** The frames from the slice's collection up to the root, in one version. */
export function framesOf(outline: Outline, floor: number, start: number, kind: Kind, col: number): Frame[] {
  const frames: Frame[] = [];
  let next: Frame | undefined = { kind, col, parent: parentOf(outline, floor, start, kind, col) };
  while (next) {
    const frame: Frame = next;
    frames.push(frame);
    next = undefined;
    if (frame.parent < floor) {
      if (frame.col !== 0) giveUp();
      break;
    }
    const line = safeAt(outline, frame.parent);
    const p = frame.parent;
    if (
      frame.kind === "map" &&
      line.dash &&
      (line.col === frame.col || (line.col === -1 && frame.col > line.indent))
    )
      // The mapping is an element of a sequence (its first key, if any, on the dash line).
      next = {
        kind: "seq",
        col: line.indent,
        parent: parentOf(outline, floor, p, "seq", line.indent),
        element: p,
      };
    else if (
      line.key !== undefined &&
      line.value === "" &&
      line.col < frame.col + (frame.kind === "seq" ? 1 : 0)
    ) {
      frame.key = line.key;
      next = { kind: "map", col: line.col, parent: parentOf(outline, floor, p + 1, "map", line.col) };
    } else giveUp();
  }
  return frames;
}

/** The lines [from, to) of a collection's entries, in one version. */
function extentOf(outline: Outline, frame: Frame): [number, number] {
  const from = frame.parent + 1;
  let to = from;
  for (let k = from; k < outline.lines.length; k++) {
    const indent = outline.indent(k);
    if (indent < 0) continue;
    if (indent < frame.col) break;
    if (indent === frame.col && frame.kind === "seq" && !safeAt(outline, k).dash) break;
    to = k + 1;
  }
  return [from, to];
}

/**
 * The keys of a mapping, each with whether its line is in [sliceFrom, sliceTo). Its first key may
 * be on its parent's dash line. A key this reading cannot name, or a value opening a flow
 * collection over several lines (whose lines would look like keys), gives up.
 */
export function keysOf(
  outline: Outline,
  frame: Frame,
  sliceFrom: number,
  sliceTo: number,
): [string, boolean][] {
  const keys: [string, boolean][] = [];
  const parent = frame.parent >= 0 ? outline.at(frame.parent) : null;
  if (parent && parent !== UNSAFE && parent.dash && parent.col === frame.col && parent.key !== undefined)
    keys.push([parent.key, false]);
  const [from, to] = extentOf(outline, frame);
  for (let k = from; k < to; k++) {
    if (outline.indent(k) !== frame.col) continue;
    const line = safeAt(outline, k);
    if (line.dash) continue;
    if (line.key === undefined || opensFlow(line.value)) giveUp();
    keys.push([line.key, k >= sliceFrom && k < sliceTo]);
  }
  return keys;
}

/** An element of a sequence: its dash line and its identity values, by candidate field. */
export interface Element {
  line: number;
  ids: Map<string, string | undefined>;
}

/** The elements of a sequence with the values of the candidate identity fields. */
export function elementsOf(outline: Outline, frame: Frame, fields: readonly string[]): Element[] {
  const [from, to] = extentOf(outline, frame);
  const elements: Element[] = [];
  let current: Element | undefined;
  let keyCol = -1;
  for (let k = from; k < to; k++) {
    const indent = outline.indent(k);
    if (indent < 0) continue;
    if (indent === frame.col) {
      const line = safeAt(outline, k);
      current = { line: k, ids: new Map() };
      elements.push(current);
      keyCol = line.col;
      if (line.key !== undefined) addId(outline, current, line, k, fields);
      else if (line.col !== -1 && /^[{[]/.test(line.value)) giveUp();
      else if (line.col !== -1) keyCol = -2;
      continue;
    }
    if (!current || keyCol === -2) continue;
    if (keyCol === -1) keyCol = indent;
    if (indent < keyCol) giveUp();
    if (indent === keyCol && mayBeField(outline.lines[k] ?? "", indent, fields)) {
      const line = safeAt(outline, k);
      if (!line.dash && line.key !== undefined) addId(outline, current, line, k, fields);
    }
  }
  return elements;
}

/** Whether a line at the key column could hold one of the fields (most cannot: read only those). */
function mayBeField(text: string, col: number, fields: readonly string[]): boolean {
  const first = text[col];
  return first === '"' || first === "'" || fields.some((f) => text.startsWith(f, col));
}

function addId(outline: Outline, element: Element, line: YamlLine, k: number, fields: readonly string[]) {
  const key = line.key as string;
  if (!fields.includes(key)) return;
  if (element.ids.has(key)) giveUp();
  // A value that goes on over deeper lines (a plain scalar folded over lines) is not this line's.
  let next = k + 1;
  while (next < outline.lines.length && outline.indent(next) < 0) next++;
  if (next < outline.lines.length && outline.indent(next) > line.col) giveUp();
  const id = scalarId(line.value);
  if (id === UNSAFE) giveUp();
  element.ids.set(key, id);
}

/** The fields the value merge tries, in its order (`identityField` in values.ts). */
export const candidateFields = (configured: string | undefined): readonly string[] =>
  configured ? [configured, ...IDENTITY_FIELDS] : IDENTITY_FIELDS;

/**
 * The identity field of three versions' elements as `identityField` would choose it from the data:
 * the first candidate every element carries with a value unique in its version.
 */
export function identityOfElements(versions: Element[][], fields: readonly string[]): string | undefined {
  if (versions.every((v) => v.length === 0)) return undefined;
  return fields.find((field) =>
    versions.every((elements) => {
      const seen = new Set<string>();
      for (const e of elements) {
        const id = e.ids.get(field);
        if (id === undefined || seen.has(id)) return false;
        seen.add(id);
      }
      return true;
    }),
  );
}

/** How many entries of a sequence come before line `at` (the index of the element there). */
export function indexOf(outline: Outline, frame: Frame, at: number): number {
  let n = 0;
  for (let k = frame.parent + 1; k < at; k++)
    if (outline.indent(k) === frame.col && safeAt(outline, k).dash) n++;
  return n;
}

/** The path segments a frame adds, from the root down (the slice's own index is its merge's). */
export function segmentsOf(outline: Outline, frame: Frame): PathSegment[] {
  const out: PathSegment[] = [];
  if (frame.key !== undefined) out.push(frame.key);
  if (frame.element !== undefined) out.push(indexOf(outline, frame, frame.element));
  return out;
}
