import type { OwnersReport } from "../../../shared/merge/assess.ts";
import { type Html, html } from "../html.ts";

/**
 * The branch page's "Owners" section: each changed path that has owners (docs/owners.md), who they
 * are and whether one of them approved the head; then the OWNERS lines that were ignored. Nothing
 * when no changed path has owners and no line was ignored.
 */
export function ownersSection(owners: OwnersReport): Html | "" {
  if (owners.paths.length === 0 && owners.invalid_lines.length === 0) return "";
  return html`<section aria-labelledby="owners-h" id="owners" data-live-region="owners"><h2 id="owners-h">Owners</h2>
${
  owners.paths.length === 0
    ? html`<p class="muted">No changed path has owners.</p>`
    : html`<table><thead><tr><th scope="col">Path</th><th scope="col">Owners</th><th scope="col">Approved</th></tr></thead><tbody>
${owners.paths.map(
  (p) =>
    html`<tr class="path-owners"><td><code>${p.path}</code></td><td>${p.owners.join(", ")} <span class="muted">(${p.prefix}OWNERS)</span></td><td>${
      p.approved_by.length > 0
        ? html`<span class="pass">&check; ${p.approved_by.join(", ")}</span>`
        : html`<span class="fail">&cross; waiting</span>`
    }</td></tr>`,
)}</tbody></table>`
}
${owners.invalid_lines.map((l) => html`<p class="muted owners-invalid">Ignored in <code>${l.file}</code>${l.line > 0 ? ` line ${l.line}` : ""}: ${l.text}</p>`)}
</section>`;
}
