import { formatPath, type PathSegment } from "../path.ts";
import type { DocumentConflict } from "./result.ts";

/*
 * The three-way merge of parsed data (JSON, or YAML read as data), the rules of docs/merge.md:
 * objects merge by key, recursively; a side that left a value as the base had it takes the other
 * side's; the same change on both sides is taken once; arrays whose elements all carry an identity
 * field merge by element; anything else changed differently on both sides is a conflict there.
 */

/** A key or element one side does not have (deleted, or never added). */
export const ABSENT: unique symbol = Symbol("absent");
export type Slot = unknown;

/** The fields that name an array element when the repo configured none, in order of preference. */
export const IDENTITY_FIELDS = ["id", "name", "key"] as const;

export interface ValueMergeOptions {
  /** The identity field to try first (`.svc/merge.yaml`'s `identity`). */
  identity?: string | undefined;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Deep equality of parsed data; key order does not matter, element order does. Loops rather than
 * `every` and `Object.keys`: this walks every unchanged part of a document once per merge.
 */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equal(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    if (!Object.hasOwn(y, k) || !equal(x[k], y[k])) return false;
    keys++;
  }
  for (const _ in y) keys--;
  return keys === 0;
}

const slotOf = (o: Record<string, unknown> | typeof ABSENT, k: string): Slot =>
  o !== ABSENT && Object.hasOwn(o, k) ? o[k] : ABSENT;

/**
 * The order of the merged keys: the base's order, with each side's added keys after the key
 * that precedes them on that side. Additions of both sides after the same key are ordered by
 * their first key, so the order does not depend on which side is ours. Keys either side deleted
 * are dropped by the caller.
 */
export function mergeOrder(
  base: readonly string[],
  ours: readonly string[],
  theirs: readonly string[],
): string[] {
  const inBase = new Set(base);
  // Runs are keyed by the base key they follow (START: none), not by a string made of it: building
  // and hashing a new string per key cost more than the rest of a large array's merge.
  const added = new Map<string | typeof START, string[][]>();
  for (const side of [ours, theirs]) {
    let anchor: string | typeof START = START;
    let run: string[] = [];
    const flush = () => {
      if (run.length === 0) return;
      const list = added.get(anchor) ?? [];
      list.push(run);
      added.set(anchor, list);
      run = [];
    };
    for (const key of side) {
      if (inBase.has(key)) {
        flush();
        anchor = key;
      } else run.push(key);
    }
    flush();
  }
  const out: string[] = [];
  const seen = new Set<string>();
  const emit = (keys: readonly string[]) => {
    for (const k of keys)
      if (!seen.has(k)) {
        seen.add(k);
        out.push(k);
      }
  };
  const emitAdded = (anchor: string | typeof START) => {
    const runs = added.get(anchor) ?? [];
    runs.sort((x, y) => compare(x.join("\0"), y.join("\0")));
    for (const run of runs) emit(run);
  };
  emitAdded(START);
  for (const key of base) {
    emit([key]);
    emitAdded(key);
  }
  return out;
}

const START: unique symbol = Symbol("start");

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The field every element of the three arrays carries with a unique string or number value, if
 * one does: the configured one first, then `id`, `name`, `key`. A side without the array counts as
 * an empty one.
 */
export function identityField(arrays: readonly unknown[][], configured?: string): string | undefined {
  if (arrays.every((a) => a.length === 0)) return undefined;
  const candidates = configured ? [configured, ...IDENTITY_FIELDS] : IDENTITY_FIELDS;
  return candidates.find((field) =>
    arrays.every((a) => {
      // The values themselves: a Set keeps `"1"` and `1` apart as `identityOf` does, without a
      // new string per element.
      const ids = new Set<unknown>();
      for (const e of a) {
        const id = isObject(e) ? e[field] : undefined;
        if ((typeof id !== "string" && typeof id !== "number") || ids.has(id)) return false;
        ids.add(id);
      }
      return true;
    }),
  );
}

/** An identity value as a key: strings and numbers kept apart (`"1"` is not `1`). */
export const identityOf = (v: unknown): string | undefined =>
  typeof v === "string" ? `s${v}` : typeof v === "number" ? `n${v}` : undefined;

/**
 * Records each conflict with its path; the merged value holds ours there. The path is one stack,
 * pushed and popped on the way down: a megabyte document has tens of thousands of keys, and a
 * fresh array per key cost more than comparing them.
 */
class ValueMerger {
  readonly conflicts: DocumentConflict[] = [];
  readonly #options: ValueMergeOptions;
  readonly #path: PathSegment[] = [];

  constructor(options: ValueMergeOptions) {
    this.#options = options;
  }

  merge(base: Slot, ours: Slot, theirs: Slot): Slot {
    if (equal(ours, theirs)) return ours;
    if (equal(base, ours)) return theirs;
    if (equal(base, theirs)) return ours;
    const b = base === ABSENT ? undefined : base;
    if (isObject(ours) && isObject(theirs) && (b === undefined || isObject(b)))
      return this.#objects(b ?? {}, ours, theirs);
    if (Array.isArray(ours) && Array.isArray(theirs) && (b === undefined || Array.isArray(b))) {
      const arrays = [b ?? [], ours, theirs];
      const field = identityField(arrays, this.#options.identity);
      if (field) return this.#byIdentity(field, b ?? [], ours, theirs);
    }
    this.conflicts.push(conflictAt(this.#path, base, ours, theirs));
    return ours;
  }

  #at(segment: PathSegment, base: Slot, ours: Slot, theirs: Slot): Slot {
    this.#path.push(segment);
    const merged = this.merge(base, ours, theirs);
    this.#path.pop();
    return merged;
  }

  #objects(base: Record<string, unknown>, ours: Record<string, unknown>, theirs: Record<string, unknown>) {
    const entries: [string, unknown][] = [];
    for (const key of mergeOrder(Object.keys(base), Object.keys(ours), Object.keys(theirs))) {
      const merged = this.#at(key, slotOf(base, key), slotOf(ours, key), slotOf(theirs, key));
      if (merged !== ABSENT) entries.push([key, merged]);
    }
    // fromEntries defines own properties: a `__proto__` key stays a key.
    return Object.fromEntries(entries);
  }

  #byIdentity(field: string, base: unknown[], ours: unknown[], theirs: unknown[]) {
    // Each element's identity is computed once, and found by its position (ids are unique).
    const ids = (a: unknown[]) => a.map((e) => identityOf((e as Record<string, unknown>)[field]) as string);
    const [bIds, oIds, tIds] = [ids(base), ids(ours), ids(theirs)];
    const [b, o, t] = [positions(bIds), positions(oIds), positions(tIds)];
    const element = (a: unknown[], at: number | undefined) => (at === undefined ? ABSENT : a[at]);
    const out: unknown[] = [];
    for (const id of mergeOrder(bIds, oIds, tIds)) {
      const [bi, oi, ti] = [b.get(id), o.get(id), t.get(id)];
      const merged = this.#at(oi ?? ti ?? 0, element(base, bi), element(ours, oi), element(theirs, ti));
      if (merged !== ABSENT) out.push(merged);
    }
    return out;
  }
}

/** Each key's index in `keys`. */
function positions(keys: readonly string[]): Map<string, number> {
  const at = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) at.set(keys[i] as string, i);
  return at;
}

function conflictAt(path: PathSegment[], base: Slot, ours: Slot, theirs: Slot): DocumentConflict {
  const conflict: DocumentConflict = { path: formatPath(path) };
  if (base !== ABSENT) conflict.base = base;
  if (ours !== ABSENT) conflict.ours = ours;
  if (theirs !== ABSENT) conflict.theirs = theirs;
  return conflict;
}

/** The merged data, or the conflicts (each at its path) when both sides changed one place differently. */
export function mergeValues(
  base: unknown,
  ours: unknown,
  theirs: unknown,
  options: ValueMergeOptions = {},
): { value: unknown } | { conflicts: DocumentConflict[] } {
  const merger = new ValueMerger(options);
  const value = merger.merge(base, ours, theirs);
  return merger.conflicts.length > 0 ? { conflicts: merger.conflicts } : { value };
}
