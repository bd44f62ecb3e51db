import pc from "picocolors";
import type { DocumentDiff, PathChange } from "../../shared/documents/changes.ts";
import type { DocumentConflict } from "../../shared/documents/merge/result.ts";
import { borderless } from "../output.ts";
import type { ConflictRow, PolicyRow } from "./review.ts";
import type { LocalChange } from "./scan.ts";

/** How output is written: colours only on a terminal without NO_COLOR, tables either way. */
export interface Style {
  color: boolean;
}

export const paint = (style: Style) => pc.createColors(style.color);

const STATUS_MARK = { added: "A", modified: "M", deleted: "D" } as const;

export function statusLines(changes: LocalChange[], style: Style): string[] {
  const c = paint(style);
  const tint = { added: c.green, modified: c.yellow, deleted: c.red } as const;
  return changes.map((ch) => `  ${tint[ch.status](`${STATUS_MARK[ch.status]} ${ch.path}`)}`);
}

/** A unified diff with +/-/@@ lines coloured as git colours them. */
export function colourPatch(patch: string, style: Style): string {
  if (!style.color) return patch;
  const c = paint(style);
  return patch
    .split("\n")
    .map((l) =>
      l.startsWith("+++") || l.startsWith("---") || l.startsWith("===") || l.startsWith("Index:")
        ? c.bold(l)
        : l.startsWith("+")
          ? c.green(l)
          : l.startsWith("-")
            ? c.red(l)
            : l.startsWith("@@")
              ? c.cyan(l)
              : l,
    )
    .join("\n");
}

function table(head: string[], rows: string[][], style: Style): string {
  return borderless(head, rows, paint(style));
}

export function policyTable(policies: PolicyRow[], style: Style): string {
  const c = paint(style);
  return table(
    ["policy", "result", "reason"],
    policies.map((p) => [p.name, p.pass ? c.green("passed") : c.red("failed"), p.reason]),
    style,
  );
}

const short = (v: string | null) => (v === null ? "deleted" : v.slice(0, 12));

/** Where inside a file a conflict is: its path, else the base line of a text region. */
const place = (p: DocumentConflict) =>
  `${p.document === undefined ? "" : `document ${p.document}: `}${p.path || `line ${p.line ?? 1}`}`;

/** One side's value at a conflicting place as compact JSON; "(none)" for a side without the key. */
function sideValue(p: DocumentConflict, side: "base" | "ours" | "theirs"): string {
  if (!Object.hasOwn(p, side)) return "(none)";
  const text = JSON.stringify(p[side]) ?? "null";
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

/**
 * The files both sides changed that did not merge, then each place inside them both sides
 * changed differently (`limits.max_files`, `line 12`) with the base's, main's and the branch's value.
 */
export function conflictTable(conflicts: ConflictRow[], style: Style): string {
  const files = table(
    ["path", "main", "branch"],
    conflicts.map((k) => [k.path, short(k.main_version_id), short(k.branch_version_id)]),
    style,
  );
  const places = conflicts.flatMap((k) =>
    (k.paths ?? []).map((p) => [
      k.path,
      place(p),
      sideValue(p, "base"),
      sideValue(p, "ours"),
      sideValue(p, "theirs"),
    ]),
  );
  if (places.length === 0) return files;
  return `${files}
${table(["file", "where", "base", "main", "branch"], places, style)}`;
}

/** Longest value shown in a cell of the structure table; the JSON output has it whole. */
const MAX_CELL = 40;

/** A value as compact JSON; "(long)" for one the service left out, "" for a side the change has not. */
function cell(change: PathChange, side: "old" | "new"): string {
  if (Object.hasOwn(change, side)) {
    const text = JSON.stringify(change[side]) ?? "null";
    return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
  }
  const hasSide = side === "old" ? change.op !== "added" : change.op !== "removed";
  return hasSide && change.values_omitted ? "(long)" : "";
}

/**
 * A JSON or YAML file's changed places under its text diff: a line naming the file, then a table
 * of place, change, old and new values (compact JSON, cut at MAX_CELL characters).
 */
export function structureTable(path: string, s: DocumentDiff, style: Style): string {
  const c = paint(style);
  const tint = { added: c.green, removed: c.red, changed: c.yellow } as const;
  const count = `${s.paths.length}${s.truncated ? "+" : ""} ${s.paths.length === 1 && !s.truncated ? "place" : "places"}`;
  const title = c.bold(`structure of ${path} (${s.format}): ${count} changed`);
  if (s.paths.length === 0) return `${title}\n  (formatting, comments or key order only)`;
  const rows = s.paths.map((p) => [
    p.path === "" ? "(document)" : p.path,
    tint[p.op](p.op),
    cell(p, "old"),
    cell(p, "new"),
  ]);
  const more = s.truncated ? "\n  … more places changed than are listed" : "";
  return `${title}\n${table(["place", "change", "old", "new"], rows, style).replace(/^/gm, "  ")}${more}`;
}
