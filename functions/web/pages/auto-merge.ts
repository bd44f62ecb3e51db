import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { BranchRecord } from "../../../shared/branches/branches.ts";
import { type Html, html } from "../html.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";

/**
 * The branch and proposal pages' auto-merge line (docs/auto-merge.md): whether it is on and who
 * enabled it, and the button to turn it on or off, offered only where the API would allow it (a
 * writer, an active branch that is not a draft).
 */
export function autoMergeSection(access: RepoAccess, branch: BranchRecord, csrf: Html): Html {
  const { auto_merge_by: by, auto_merge_at: at } = branch;
  const on = by !== null && at !== null;
  const line = on
    ? html`<p id="auto-merge-state">Auto-merge is on: it merges as ${by} (enabled ${timeTag(at)}) once the policies pass.</p>`
    : "";
  const mayChange = atLeast(access.role, "writer") && branch.status === "active" && !branch.draft;
  if (!mayChange) return html`${line}`;
  return html`${line}<form method="post" action="${u.autoMergeUrl(access.repo.name, branch.name)}">${csrf}<input type="hidden" name="state" value="${on ? "off" : "on"}"><button type="submit" id="auto-merge-button">${on ? "Disable auto-merge" : "Enable auto-merge"}</button></form>`;
}
