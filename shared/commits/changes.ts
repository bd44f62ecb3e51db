import type { Queryable } from "../db/pool.ts";
import { versionId } from "./content.ts";
import { byPathBytes } from "./hash.ts";
import type { View } from "./view.ts";

export type ChangeStatus = "added" | "modified" | "deleted";

/** One path whose content on a branch differs from `main` at the branch's base. */
export interface NetChange {
  path: string;
  status: ChangeStatus;
  /** The branch's content, or null when the branch deleted the path. */
  branchSha: Buffer | null;
  contentType: string | null;
  branchBinary: boolean;
  /** `main`'s content at the base, or null when the path did not exist there. */
  mainSha: Buffer | null;
  mainBinary: boolean;
}

export interface Conflict {
  path: string;
  main_version_id: string | null;
  branch_version_id: string | null;
}

// Per path the branch touched in its current epoch: its newest version, and main's at the base.
const branch_touched_select = `
  SELECT b.path, b.content_sha256 AS branch_sha, b.content_type, b.is_binary AS branch_binary,
         m.content_sha256 AS main_sha, coalesce(m.is_binary, false) AS main_binary
  FROM (SELECT DISTINCT ON (path) path, content_sha256, content_type, is_binary FROM file_changes
        WHERE branch_id = $1 AND sequence BETWEEN $2 AND $3 ORDER BY path, sequence DESC) b
  LEFT JOIN LATERAL (SELECT f.content_sha256, f.is_binary FROM file_changes f
        WHERE f.branch_id = $4 AND f.path = b.path AND f.sequence <= $5 ORDER BY f.sequence DESC LIMIT 1) m ON true`;

// The paths main changed after `base` and up to its head, with main's newest version of each.
const main_changed_since_select = `
  SELECT DISTINCT ON (f.path) f.path, f.content_sha256
  FROM file_changes f
  WHERE f.branch_id = $1 AND f.sequence > $2 AND f.sequence <= $3 AND f.path = ANY ($4::text[])
  ORDER BY f.path, f.sequence DESC`;

export function statusOf(mainSha: Buffer | null, branchSha: Buffer | null): ChangeStatus | null {
  if (mainSha === null) return branchSha === null ? null : "added";
  if (branchSha === null) return "deleted";
  return mainSha.equals(branchSha) ? null : "modified";
}

/**
 * What a branch (viewed at its head) changes relative to `main` at its base, in path byte order.
 * A path changed and changed back is not a change.
 */
export async function netChanges(db: Queryable, view: View): Promise<NetChange[]> {
  const { rows } = await db.query(branch_touched_select, [
    view.branch.id,
    view.ownFrom,
    view.at,
    view.parentId,
    view.parentAt,
  ]);
  const changes: NetChange[] = [];
  for (const r of rows.sort(byPathBytes)) {
    const status = statusOf(r.main_sha, r.branch_sha);
    if (!status) continue;
    changes.push({
      path: r.path,
      status,
      branchSha: r.branch_sha,
      contentType: r.content_type,
      branchBinary: r.branch_binary,
      mainSha: r.main_sha,
      mainBinary: r.main_binary,
    });
  }
  return changes;
}

/**
 * The conflicts of a branch's changes with `main`: every changed path that `main` also changed
 * after the branch's base, up to `mainHead`. Only a net change on the branch can conflict.
 */
export async function conflictsWithMain(
  db: Queryable,
  view: View,
  mainHead: number,
  changes: NetChange[],
): Promise<Conflict[]> {
  if (changes.length === 0 || view.parentId === null) return [];
  const { rows } = await db.query<{ path: string; content_sha256: Buffer | null }>(
    main_changed_since_select,
    [view.parentId, view.parentAt, mainHead, changes.map((c) => c.path)],
  );
  const branchVersion = new Map(changes.map((c) => [c.path, versionId(c.branchSha)]));
  return rows.sort(byPathBytes).map((r) => ({
    path: r.path,
    main_version_id: versionId(r.content_sha256),
    branch_version_id: branchVersion.get(r.path) ?? null,
  }));
}
