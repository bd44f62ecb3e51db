import { createTwoFilesPatch } from "diff";
import type { RepoAccess } from "../access/roles.ts";
import { MAIN, requireBranch } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";
import { loadBody, versionId } from "./content.ts";
import { byPathBytes } from "./hash.ts";

/** Text files larger than this get `diff: ""` rather than a unified diff. */
export const MAX_TEXT_DIFF_BYTES = 1_048_576;

type Status = "added" | "modified" | "deleted";

// Per path the branch touched: its newest version on the branch, and main's version at the base.
const branch_changes_select = `
  SELECT b.path, b.content_sha256 AS branch_sha, b.is_binary AS branch_binary, m.content_sha256 AS main_sha, m.is_binary AS main_binary
  FROM (SELECT DISTINCT ON (path) path, content_sha256, is_binary FROM file_changes
        WHERE branch_id = $1 AND sequence <= $2 ORDER BY path, sequence DESC) b
  LEFT JOIN LATERAL (SELECT f.content_sha256, f.is_binary FROM file_changes f
        WHERE f.branch_id = $3 AND f.path = b.path AND f.sequence <= $4 ORDER BY f.sequence DESC LIMIT 1) m ON true`;
// Paths main changed since the branch's base that the branch changed too, with main's newest version.
const conflicts_select = `
  SELECT DISTINCT ON (f.path) f.path, f.content_sha256
  FROM file_changes f
  WHERE f.branch_id = $1 AND f.sequence > $2 AND f.sequence <= $3 AND f.path = ANY ($4::text[])
  ORDER BY f.path, f.sequence DESC`;

function statusOf(mainSha: Buffer | null, branchSha: Buffer | null): Status | null {
  if (mainSha === null) return branchSha === null ? null : "added";
  if (branchSha === null) return "deleted";
  return mainSha.equals(branchSha) ? null : "modified";
}

async function textOf(ctx: AppContext, repoId: number, sha: Buffer | null): Promise<string | null> {
  if (sha === null) return "";
  const data = await loadBody(ctx.pool, ctx.blobs, repoId, sha);
  return data.length > MAX_TEXT_DIFF_BYTES ? null : data.toString("utf8");
}

/**
 * The files changed on a branch relative to its base on `main` (a path changed and changed back
 * is not listed), with a unified diff for text files, and the conflicts: paths changed on both
 * `main` and the branch since the base, as {path, main_version_id, branch_version_id}.
 */
export async function diffBranch(ctx: AppContext, access: RepoAccess, branchName: string) {
  if (branchName === MAIN)
    fail("VALIDATION_FAILED", "query.branch: 'main' has no base to compare with; name another branch");
  const branch = await requireBranch(ctx.pool, access.repo.id, branchName);
  const main = await requireBranch(ctx.pool, access.repo.id, MAIN);
  const { rows } = await ctx.pool.query(branch_changes_select, [
    branch.id,
    branch.head_sequence,
    main.id,
    branch.base_sequence,
  ]);
  const changes = [];
  for (const r of rows.sort(byPathBytes)) {
    const status = statusOf(r.main_sha, r.branch_sha);
    if (!status) continue;
    const binary = Boolean(r.branch_binary) || Boolean(r.main_binary && r.main_sha);
    let diff = "";
    if (!binary) {
      const [before, after] = await Promise.all([
        textOf(ctx, access.repo.id, r.main_sha),
        textOf(ctx, access.repo.id, r.branch_sha),
      ]);
      if (before !== null && after !== null)
        diff = createTwoFilesPatch(`a/${r.path}`, `b/${r.path}`, before, after, "", "", { context: 3 });
    }
    changes.push({ path: r.path as string, status, binary, diff });
  }
  // Only a net change on the branch can conflict: a path changed and changed back did not change.
  const touched = changes.map((c) => c.path);
  const clash = await ctx.pool.query(conflicts_select, [
    main.id,
    branch.base_sequence,
    main.head_sequence,
    touched,
  ]);
  const branchVersion = new Map(rows.map((r) => [r.path as string, versionId(r.branch_sha)]));
  const conflicts = clash.rows.sort(byPathBytes).map((c) => ({
    path: c.path as string,
    main_version_id: versionId(c.content_sha256),
    branch_version_id: branchVersion.get(c.path) ?? null,
  }));
  return { changes, conflicts };
}
