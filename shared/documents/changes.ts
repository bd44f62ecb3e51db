import YAML, { isScalar, type YAMLMap } from "yaml";
import { formatPath, type PathSegment } from "./path.ts";

/**
 * The structured diff of a JSON or YAML file: the places in the document that changed, named as
 * shared/documents/path.ts names them, each the deepest place that changed (a scalar at
 * `limits.max_files`, an added key, a removed array element). Used by the diff endpoint, the web
 * diffs, `quire diff` and the policy input (docs/api.md, "Structured changes").
 *
 * Two extensions of the path notation, both documented there:
 * - an element of an array matched by identity is `owners[name="alice"]` (`[id=3]` for a number);
 * - in a file that holds more than one YAML document on either side, the first segment is the
 *   document's index: `[1].metadata.name`, and `multi_document` says so.
 */

export type ChangeOp = "added" | "removed" | "changed";

/** One changed place; `old` for removed and changed, `new` for added and changed. */
export interface PathChange {
  path: string;
  op: ChangeOp;
  old?: unknown;
  new?: unknown;
  /** Set when `old` or `new` is left out because its JSON is longer than MAX_VALUE_CHARS. */
  values_omitted?: true;
}

export interface DocumentDiff {
  format: "json" | "yaml";
  /** Whether either side holds more than one YAML document; then every path starts with `[n]`. */
  multi_document: boolean;
  /** In each object or array, the old side's order, then what only the new side has; at most MAX_PATHS. */
  paths: PathChange[];
  /** More than MAX_PATHS places changed; only the first MAX_PATHS are listed. */
  truncated: boolean;
}

/** Most changed places listed per file: a few screens, and a bounded policy input. */
export const MAX_PATHS = 100;
/** Longest value, as JSON text, given as `old` or `new`; a longer one is left out. */
export const MAX_VALUE_CHARS = 512;
/** Fields that identify an element of an array of objects, tried in this order. */
const IDENTITY_FIELDS = ["id", "name", "key"] as const;

type DocumentFormat = DocumentDiff["format"];

/** `json` for `.json`, `yaml` for `.yaml` and `.yml` (any case); null for other files. */
export function documentFormat(filePath: string): DocumentFormat | null {
  const lower = filePath.toLowerCase();
  if (lower.endsWith(".json")) return "json";
  if (lower.endsWith(".yaml") || lower.endsWith(".yml")) return "yaml";
  return null;
}

/**
 * Texts longer than this get no structured diff (only the text diff). The yaml package takes
 * about 190 ms of CPU here for a 125 KB YAML text (both sides of a change: 380 ms), and a diff
 * must not hold the event loop, or a merge its locks, for long. Configuration files are far smaller
 * (a 7-line file takes 0.25 ms).
 */
export const MAX_DOCUMENT_CHARS = 65_536;

/**
 * A structured diff with an allowance of text shared by the files of one answer (a diff, a page,
 * a merge's policy input): each file spends the length of its two texts, and a file that no
 * longer fits gets none (null), so many documents cost no more than `chars` characters of parsing.
 */
export function structureBudget(chars: number) {
  let left = chars;
  return (filePath: string, before: string | null, after: string | null): DocumentDiff | null => {
    const cost = (before?.length ?? 0) + (after?.length ?? 0);
    if (documentFormat(filePath) === null || cost > left) return null;
    left -= cost;
    return diffDocuments(filePath, before, after);
  };
}

/**
 * Whether every mapping in a YAML document has distinct keys. The yaml package's own check
 * (`uniqueKeys`) compares each key with every earlier one, which took 7 s for a map of 20,000
 * keys; this is one set per map. Scalar keys compare as the strings `toJS` makes of them.
 */
function keysUnique(doc: YAML.Document): boolean {
  let unique = true;
  YAML.visit(doc, {
    Map(_, map: YAMLMap) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : JSON.stringify(pair.key);
        if (seen.has(key)) {
          unique = false;
          return YAML.visit.BREAK;
        }
        seen.add(key);
      }
      return undefined;
    },
  });
  return unique;
}

/**
 * A text's documents (one for JSON; a YAML stream may hold any number, an empty one is one null
 * document); null when it does not parse, repeats a key, or is above MAX_DOCUMENT_CHARS. YAML
 * aliases expand up to 100, as the file page does.
 */
function parseDocuments(format: DocumentFormat, text: string): unknown[] | null {
  if (text.length > MAX_DOCUMENT_CHARS) return null;
  try {
    if (format === "json") return [JSON.parse(text.replace(/^\uFEFF/, ""))];
    const docs = YAML.parseAllDocuments(text, { uniqueKeys: false });
    if (docs.some((d) => d.errors.length > 0 || !keysUnique(d))) return null;
    const values = docs.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
    return values.length === 0 ? [null] : values;
  } catch {
    return null;
  }
}

/** An element of an array matched by its identity field rather than its index. */
interface IdentitySegment {
  field: string;
  value: string | number;
}
type Segment = PathSegment | IdentitySegment;

/** formatPath, with identity segments as `[field=value]` (the value as JSON). */
function formatSegments(segments: readonly Segment[]): string {
  let out = "";
  let run: PathSegment[] = [];
  const flush = () => {
    // A plain first key stands alone; after something it needs its dot, which a dummy lead gives.
    out += out === "" ? formatPath(run) : formatPath(["x", ...run]).slice(1);
    run = [];
  };
  for (const s of segments) {
    if (typeof s === "object") {
      flush();
      out += `[${s.field}=${JSON.stringify(s.value)}]`;
    } else run.push(s);
  }
  flush();
  return out;
}

interface Collector {
  paths: PathChange[];
  truncated: boolean;
}

function emit(out: Collector, at: readonly Segment[], op: ChangeOp, before: unknown, after: unknown) {
  if (out.paths.length >= MAX_PATHS) {
    out.truncated = true;
    return;
  }
  const change: PathChange = { path: formatSegments(at), op };
  const give = (side: "old" | "new", value: unknown) => {
    if ((JSON.stringify(value) ?? "null").length <= MAX_VALUE_CHARS) change[side] = value;
    else change.values_omitted = true;
  };
  if (op !== "added") give("old", before);
  if (op !== "removed") give("new", after);
  out.paths.push(change);
}

type Kind = "array" | "object" | "scalar";
const kindOf = (v: unknown): Kind =>
  Array.isArray(v) ? "array" : typeof v === "object" && v !== null ? "object" : "scalar";

function walk(out: Collector, at: Segment[], before: unknown, after: unknown): void {
  if (out.truncated) return;
  const kind = kindOf(before);
  if (kind !== kindOf(after)) emit(out, at, "changed", before, after);
  else if (kind === "object") walkObject(out, at, before as object, after as object);
  else if (kind === "array") walkArray(out, at, before as unknown[], after as unknown[]);
  else if (!Object.is(before, after)) emit(out, at, "changed", before, after);
}

function walkObject(out: Collector, at: Segment[], before: object, after: object) {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  for (const key of Object.keys(a)) {
    if (Object.hasOwn(b, key)) walk(out, [...at, key], a[key], b[key]);
    else emit(out, [...at, key], "removed", a[key], undefined);
  }
  for (const key of Object.keys(b))
    if (!Object.hasOwn(a, key)) emit(out, [...at, key], "added", undefined, b[key]);
}

function walkArray(out: Collector, at: Segment[], before: unknown[], after: unknown[]) {
  const field = identityField(before, after);
  if (field !== null) {
    walkByIdentity(out, at, field, before, after);
    return;
  }
  const common = Math.min(before.length, after.length);
  for (let i = 0; i < common; i++) walk(out, [...at, i], before[i], after[i]);
  for (let i = common; i < before.length; i++) emit(out, [...at, i], "removed", before[i], undefined);
  for (let i = common; i < after.length; i++) emit(out, [...at, i], "added", undefined, after[i]);
}

/** The identity of an element under `field`: a string or finite number, or null when it has none. */
function identityOf(element: unknown, field: string): string | number | null {
  if (kindOf(element) !== "object" || !Object.hasOwn(element as object, field)) return null;
  const value = (element as Record<string, unknown>)[field];
  if (typeof value === "string" || (typeof value === "number" && Number.isFinite(value))) return value;
  return null;
}

/** Whether every element is an object with a distinct identity under `field`. */
function identifiedBy(list: unknown[], field: string): boolean {
  const seen = new Set<string>();
  for (const element of list) {
    const id = identityOf(element, field);
    if (id === null) return false;
    seen.add(JSON.stringify(id));
  }
  return seen.size === list.length;
}

/** The first identity field that every element on both sides carries, distinct on each side. */
function identityField(before: unknown[], after: unknown[]): string | null {
  if (before.length === 0 || after.length === 0) return null;
  return IDENTITY_FIELDS.find((f) => identifiedBy(before, f) && identifiedBy(after, f)) ?? null;
}

/**
 * Elements matched by identity: an insertion or removal in the middle names only that element.
 * When the elements both sides hold are in another order, the order is the change, and the
 * array is one changed value (a reorder must not look like no change at all).
 */
function walkByIdentity(out: Collector, at: Segment[], field: string, before: unknown[], after: unknown[]) {
  const key = (e: unknown) => JSON.stringify(identityOf(e, field));
  const afterById = new Map(after.map((e) => [key(e), e]));
  const beforeIds = new Set(before.map(key));
  const keptBefore = before.map(key).filter((k) => afterById.has(k));
  const keptAfter = after.map(key).filter((k) => beforeIds.has(k));
  if (keptBefore.some((k, i) => k !== keptAfter[i])) {
    emit(out, at, "changed", before, after);
    return;
  }
  const segment = (e: unknown): IdentitySegment => ({
    field,
    value: identityOf(e, field) as string | number,
  });
  for (const e of before) {
    const match = afterById.get(key(e));
    if (match === undefined) emit(out, [...at, segment(e)], "removed", e, undefined);
    else walk(out, [...at, segment(e)], e, match);
  }
  for (const e of after) if (!beforeIds.has(key(e))) emit(out, [...at, segment(e)], "added", undefined, e);
}

/**
 * The changed places between two versions of a JSON or YAML file (null text: the side does not
 * exist, so the file was added or deleted and its root is the one change). Null for other files
 * and when a side that exists does not parse: then only the text diff describes the change.
 */
export function diffDocuments(
  filePath: string,
  before: string | null,
  after: string | null,
): DocumentDiff | null {
  const format = documentFormat(filePath);
  if (format === null || (before === null && after === null)) return null;
  const old = before === null ? null : parseDocuments(format, before);
  const now = after === null ? null : parseDocuments(format, after);
  if ((before !== null && old === null) || (after !== null && now === null)) return null;
  const multi = (old?.length ?? 1) !== 1 || (now?.length ?? 1) !== 1;
  const out: Collector = { paths: [], truncated: false };
  const count = Math.max(old?.length ?? 0, now?.length ?? 0);
  for (let i = 0; i < count; i++) {
    const at: Segment[] = multi ? [i] : [];
    const [a, b] = [old?.[i], now?.[i]];
    const hasA = old !== null && i < old.length;
    const hasB = now !== null && i < now.length;
    if (hasA && hasB) walk(out, at, a, b);
    else if (hasA) emit(out, at, "removed", a, undefined);
    else emit(out, at, "added", undefined, b);
  }
  return { format, multi_document: multi, paths: out.paths, truncated: out.truncated };
}
