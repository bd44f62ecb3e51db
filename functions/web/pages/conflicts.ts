import type { Conflict } from "../../../shared/commits/changes.ts";
import type { DocumentConflict } from "../../../shared/documents/merge/result.ts";
import { type Html, html } from "../html.ts";

/**
 * A file both sides changed that did not merge, as the merge and the branch status answer it
 * (docs/merge.md): how it was merged and each place inside it both sides changed differently.
 */
export type ShownConflict = Conflict & { merge?: string; paths?: DocumentConflict[] };

/** Longest value shown in a cell; the API's 409 body has it whole. */
const MAX_CELL = 80;

/** Where in the file: `limits.max_files`, or the base line a text region starts at. */
function place(p: DocumentConflict): string {
  const where = p.path || `line ${p.line ?? 1}`;
  return p.document === undefined ? where : `document ${p.document}: ${where}`;
}

/** One side's value as compact JSON (text regions as their lines); a side without the key says so. */
function sideCell(p: DocumentConflict, side: "base" | "ours" | "theirs"): Html {
  if (!Object.hasOwn(p, side)) return html`<td class="muted">(none)</td>`;
  const value = p[side];
  const text = Array.isArray(value) && p.path === "" ? value.join("\n") : (JSON.stringify(value) ?? "null");
  return html`<td><code>${text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text}</code></td>`;
}

/** The places of one file as a small table: where, base, main, branch. */
function placesTable(c: ShownConflict): Html {
  const paths = c.paths ?? [];
  if (paths.length === 0)
    return html`<span class="muted">${c.merge === "file" || c.merge === undefined ? " (the whole file)" : ""}</span>`;
  return html`<div class="scroll"><table class="conflict-places"><thead><tr><th scope="col">Where</th><th scope="col">Base</th><th scope="col">main</th><th scope="col">Branch</th></tr></thead><tbody>
${paths.map((p) => html`<tr><th scope="row"><code>${place(p)}</code></th>${sideCell(p, "base")}${sideCell(p, "ours")}${sideCell(p, "theirs")}</tr>`)}</tbody></table></div>`;
}

/**
 * Each conflicting file, then the places inside it with the base's, main's and the branch's value,
 * so a reader sees that `limits.max_files` went 100 → 200 on main and 100 → 500 on the branch.
 */
export function conflictList(conflicts: readonly ShownConflict[]): Html {
  return html`<ul class="conflicts">${conflicts.map(
    (c) =>
      html`<li data-conflict="${c.path}">conflict: <code>${c.path}</code>${c.merge && c.merge !== "file" ? html` <span class="muted">(merged as ${c.merge})</span>` : ""}${placesTable(c)}</li>`,
  )}</ul>`;
}
