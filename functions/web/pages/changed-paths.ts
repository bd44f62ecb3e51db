import type { DocumentDiff, PathChange } from "../../../shared/documents/changes.ts";
import { type Html, html } from "../html.ts";

/**
 * The "changed paths" of a JSON or YAML file, shown above its text diff by the diff renderer
 * (diff.ts): one row per changed place with its change and its old and new values as compact
 * JSON, so a reviewer sees `limits.max_files 10 → 20` without reading the hunks.
 */

/** Longest value shown in a cell; the API (`GET diff`) has it whole. */
const MAX_CELL = 80;

const OP_STATUS = { added: "added", removed: "deleted", changed: "modified" } as const;

function valueCell(change: PathChange, side: "old" | "new"): Html {
  if (Object.hasOwn(change, side)) {
    const text = JSON.stringify(change[side]) ?? "null";
    return html`<td><code>${text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text}</code></td>`;
  }
  const hasSide = side === "old" ? change.op !== "added" : change.op !== "removed";
  return hasSide && change.values_omitted ? html`<td class="muted">long value</td>` : html`<td></td>`;
}

function row(change: PathChange): Html {
  const place =
    change.path === ""
      ? html`<span class="muted">the whole document</span>`
      : html`<code>${change.path}</code>`;
  return html`<tr><td>${place}</td><td><span class="status status-${OP_STATUS[change.op]}">${change.op}</span></td>${valueCell(change, "old")}${valueCell(change, "new")}</tr>`;
}

/** The table of a file's changed places, or a line saying its change is formatting only. */
export function changedPathsTable(structure: DocumentDiff): Html {
  const n = structure.paths.length;
  if (n === 0)
    return html`<p class="muted changed-paths-none">No change to the data: formatting, comments or key order only.</p>`;
  const count = `${n}${structure.truncated ? "+" : ""} ${n === 1 && !structure.truncated ? "path" : "paths"}`;
  return html`<div class="scroll"><table class="changed-paths"><caption>Changed paths (${count})</caption><thead><tr><th scope="col">Path</th><th scope="col">Change</th><th scope="col">Old</th><th scope="col">New</th></tr></thead><tbody>
${structure.paths.map(row)}
</tbody></table></div>${structure.truncated ? html`<p class="muted">More paths changed than are listed here; the text diff below has every change.</p>` : ""}`;
}
