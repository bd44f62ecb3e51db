import pc from "picocolors";
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

export function conflictTable(conflicts: ConflictRow[], style: Style): string {
  return table(
    ["path", "main", "branch"],
    conflicts.map((k) => [k.path, short(k.main_version_id), short(k.branch_version_id)]),
    style,
  );
}
