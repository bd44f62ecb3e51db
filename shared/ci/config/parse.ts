import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
} from "yaml";
import type { z } from "zod";
import { type ConfigError, MAX_CONFIG_BYTES } from "./file.ts";
import { type CiConfig, ciFileSchema, isPlainObject, knownKeys } from "./schema.ts";

export type ParseCiConfigResult = { ok: true; config: CiConfig } | { ok: false; errors: ConfigError[] };

type Path = readonly PropertyKey[];

/**
 * Parses and validates `.svc/ci.yaml`. Every problem found is reported at once, each with the
 * line and column of the node it is about, so that one failed check run tells the author all
 * there is to fix.
 */
export function parseCiConfig(text: string): ParseCiConfigResult {
  if (Buffer.byteLength(text, "utf8") > MAX_CONFIG_BYTES)
    return fail([{ message: `the file is larger than ${MAX_CONFIG_BYTES} bytes` }]);
  const lines = new LineCounter();
  // YAML 1.2 (the default): `on` is a string key, not the boolean it is in YAML 1.1.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, merge: true, uniqueKeys: true });
  // Warnings too (an unresolved tag, a collection used as a key): the file must mean one thing.
  const syntax = [...doc.errors, ...doc.warnings].map((e) => at(`YAML: ${e.message}`, lines, e.pos[0]));
  if (syntax.length > 0) return fail(syntax);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return fail([{ message: `the file cannot be read: ${(err as Error).message}` }]);
  }
  if (data === null || data === undefined)
    return fail([{ message: "the file is empty: it needs a 'checks' list", line: 1, column: 1 }]);
  const located = new Locator(doc, lines, text);
  const parsed = ciFileSchema.safeParse(data);
  const errors = parsed.success ? [] : parsed.error.issues.flatMap((i) => located.issue(i));
  for (const p of crossCheckProblems(data)) errors.push(located.at(p.path, `${where(p.path)}: ${p.message}`));
  if (errors.length > 0 || !parsed.success) return fail(errors);
  return { ok: true, config: parsed.data };
}

function fail(errors: ConfigError[]): ParseCiConfigResult {
  const seen = new Set<string>();
  const unique = errors.filter((e) => {
    const key = `${e.line}:${e.column}:${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  unique.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0));
  return { ok: false, errors: unique };
}

function at(message: string, lines: LineCounter, offset: number): ConfigError {
  const { line, col } = lines.linePos(offset);
  return { message, line, column: col };
}

/** `checks[0].steps[1]`; "" for the document itself. */
function where(path: Path): string {
  let out = "";
  for (const seg of path)
    out += typeof seg === "number" ? `[${seg}]` : out === "" ? String(seg) : `.${String(seg)}`;
  return out;
}

/** Maps paths in the parsed value back to positions in the text, through the YAML nodes. */
class Locator {
  #doc: Document;
  #lines: LineCounter;
  #text: string;

  constructor(doc: Document, lines: LineCounter, text: string) {
    this.#doc = doc;
    this.#lines = lines;
    this.#text = text;
  }

  /** One error per zod issue; one per key for unknown keys, each at its key. */
  issue(issue: z.core.$ZodIssue): ConfigError[] {
    const path = issue.path;
    if (issue.code === "unrecognized_keys") return issue.keys.map((key) => this.#unknownKey(path, key));
    const prefix = path.length === 0 ? "the file" : where(path);
    const error = this.at(path, `${prefix}: ${issue.message}`);
    const index = issue.code === "custom" ? (issue.params?.["index"] as number | undefined) : undefined;
    return [index === undefined ? error : this.#inScalar(path, error, index)];
  }

  /** The error at the deepest node of `path` that exists (a missing key points at its mapping). */
  at(path: Path, message: string): ConfigError {
    const { node } = this.#walk(path);
    const offset = node?.range?.[0];
    return offset === undefined ? { message } : at(message, this.#lines, offset);
  }

  #unknownKey(path: Path, key: string): ConfigError {
    const { node, complete } = this.#walk(path);
    const allowed = knownKeys[path.map((s) => (typeof s === "number" ? "[]" : String(s))).join(".")] ?? [];
    const hint = suggestion(key, allowed);
    const message =
      `${where(path) || "the file"}: unknown key '${key}'` +
      (hint ? `; did you mean '${hint}'?` : "") +
      (allowed.length ? ` (allowed: ${allowed.join(", ")})` : "");
    const pair = complete && isMap(node) ? node.items.find((p) => keyText(p.key) === key) : undefined;
    const offset = (pair?.key as Node | undefined)?.range?.[0] ?? node?.range?.[0];
    return offset === undefined ? { message } : at(message, this.#lines, offset);
  }

  /**
   * Points an `if:` error at the offending character when the scalar's text in the file is the
   * value itself (plain or quoted without escapes, on one line); otherwise at the scalar.
   */
  #inScalar(path: Path, error: ConfigError, index: number): ConfigError {
    const { node, complete } = this.#walk(path);
    if (!complete || !isScalar(node) || typeof node.value !== "string" || !node.range) return error;
    const [start, end] = node.range;
    const raw = this.#text.slice(start, end);
    const quoted = node.type === "QUOTE_SINGLE" || node.type === "QUOTE_DOUBLE";
    const inner = quoted ? raw.slice(1, -1) : raw;
    if (inner !== node.value || (node.type !== "PLAIN" && !quoted)) return error;
    return at(error.message, this.#lines, start + (quoted ? 1 : 0) + index);
  }

  #walk(path: Path): { node: Node | undefined; complete: boolean } {
    let node = this.#doc.contents as Node | null | undefined;
    for (const seg of path) {
      if (isAlias(node)) node = node.resolve(this.#doc) as Node | undefined;
      let next: unknown;
      if (isMap(node)) next = node.items.find((p) => keyText(p.key) === String(seg))?.value;
      else if (isSeq(node) && typeof seg === "number") next = node.items[seg];
      if (!next || isPair(next)) return { node: node ?? undefined, complete: false };
      node = next as Node;
    }
    return { node: node ?? undefined, complete: true };
  }
}

function keyText(key: unknown): string | undefined {
  return isScalar(key) ? String(key.value) : undefined;
}

// Keys from other CI systems and the YAML 1.1 reading of `on`, with what Quire calls them.
const ALIASES: Record<string, string> = {
  true: "on",
  pull_request: "proposal",
  workflow_dispatch: "manual",
  jobs: "checks",
  run: "steps",
  script: "steps",
  when: "if",
  depends_on: "needs",
  base_branch: "base_branches",
};

/** The allowed key `key` was probably meant to be, if any. */
function suggestion(key: string, allowed: readonly string[]): string | undefined {
  const alias = ALIASES[key];
  if (alias && allowed.includes(alias)) return alias;
  const lower = key.toLowerCase();
  return (
    allowed.find((k) => k === lower || distance(k, lower) <= (k.length > 4 ? 2 : 1)) ??
    allowed.find((k) => lower.length >= 4 && (k.includes(lower) || lower.includes(k)))
  );
}

/** Levenshtein distance, for short keys: one row of the table at a time. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let result = b.length; // the last cell of the last row
  for (let i = 1; i <= a.length; i++) {
    let left = i; // row[j - 1]
    let diagonal = i - 1; // prev[j - 1]
    const row = [left];
    for (const [k, up] of prev.slice(1).entries()) {
      // Cell j = k + 1: up is prev[j].
      left = Math.min(up + 1, left + 1, diagonal + (a[i - 1] === b[k] ? 0 : 1));
      row.push(left);
      diagonal = up;
    }
    prev = row;
    result = left;
  }
  return result;
}

/**
 * Rules across checks, read from the raw value so that they are reported alongside any type
 * errors: names are unique, and `needs` names other checks of this file without a cycle (order
 * is not enforced today, but a cycle could never be honoured if it were).
 */
function crossCheckProblems(data: unknown): { path: Path; message: string }[] {
  const checks = isPlainObject(data) && Array.isArray(data["checks"]) ? data["checks"] : [];
  const first = new Map<string, number>();
  const problems: { path: Path; message: string }[] = [];
  checks.forEach((c, i) => {
    const name = isPlainObject(c) ? c["name"] : undefined;
    if (typeof name !== "string") return;
    const earlier = first.get(name);
    if (earlier === undefined) first.set(name, i);
    else
      problems.push({
        path: ["checks", i, "name"],
        message: `duplicate check name '${name}' (also checks[${earlier}])`,
      });
  });
  const needs = new Map<string, string[]>();
  checks.forEach((c, i) => {
    const list = isPlainObject(c) && Array.isArray(c["needs"]) ? (c["needs"] as unknown[]) : [];
    const own = isPlainObject(c) ? c["name"] : undefined;
    list.forEach((n, k) => {
      if (typeof n !== "string") return;
      if (n === own)
        problems.push({ path: ["checks", i, "needs", k], message: "a check cannot need itself" });
      else if (!first.has(n))
        problems.push({ path: ["checks", i, "needs", k], message: `names no check in this file: '${n}'` });
    });
    if (typeof own === "string" && first.get(own) === i)
      needs.set(
        own,
        list.filter((n) => typeof n === "string"),
      );
  });
  if (problems.length === 0) problems.push(...cycleProblems(needs, first));
  return problems;
}

/** One problem per cycle in the `needs` graph, at the `needs` of the first check in it. */
function cycleProblems(needs: Map<string, string[]>, index: Map<string, number>) {
  const state = new Map<string, "active" | "done">();
  const problems: { path: Path; message: string }[] = [];
  const visit = (name: string, trail: string[]): void => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "active") {
      const cycle = [...trail.slice(trail.indexOf(name)), name];
      const at = index.get(name);
      // needs only has keys that crossCheckProblems took from `index`.
      if (at === undefined) throw new Error(`check '${name}' has needs but no index`);
      problems.push({
        path: ["checks", at, "needs"],
        message: `needs form a cycle: ${cycle.join(" -> ")}`,
      });
      return;
    }
    state.set(name, "active");
    for (const next of needs.get(name) ?? []) visit(next, [...trail, name]);
    state.set(name, "done");
  };
  for (const name of needs.keys()) visit(name, []);
  return problems;
}
