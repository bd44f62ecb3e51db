import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { AppContext } from "../context.ts";
import { Rollback, type Tx, withTx } from "../db/tx.ts";
import { commitLeafSql } from "../transparency/log.ts";
import { parseDuration } from "./duration.ts";

export interface PurgeReport {
  older_than: string;
  cutoff: Date;
  dry_run: boolean;
  branches: { name: string; status: string; closed_at: Date }[];
  commits: number;
  file_changes: number;
  contents: number;
  bytes: number;
}

// Merged or abandoned before the cutoff, and not holding the commit a release names. main's own
// rows and active branches never read another branch's rows (a merge copies them onto main), so
// nothing they read goes. Locked so a concurrent purge or release waits.
const purgeable_branches_select = `
  SELECT b.id, b.name, b.status, coalesce(b.merged_at, b.updated_at) AS closed_at
  FROM branches b
  WHERE b.repo_id = $1 AND b.status IN ('merged', 'abandoned')
    AND coalesce(b.merged_at, b.updated_at) < $2
    AND NOT EXISTS (SELECT 1 FROM releases r JOIN commits c ON c.repo_id = r.repo_id AND c.sequence = r.sequence
                    WHERE r.repo_id = $1 AND c.branch_id = b.id)
  ORDER BY b.name
  FOR UPDATE OF b`;
// A leaf of the transparency log is its commit's hash: the commit goes, its leaf stays, so proofs
// given before the purge still verify (docs/verifiable-history.md, "The log").
const purged_leaves_keep = `
  INSERT INTO tlog_nodes (repo_id, level, idx, hash)
  SELECT repo_id, 0, sequence - 1, ${commitLeafSql("hash")}
  FROM commits WHERE branch_id = ANY ($1::bigint[])
  ON CONFLICT (repo_id, level, idx) DO NOTHING`;
const commits_delete = `DELETE FROM commits WHERE branch_id = ANY ($1::bigint[])`;
const file_changes_delete = `DELETE FROM file_changes WHERE branch_id = ANY ($1::bigint[])`;
const branches_delete = `DELETE FROM branches WHERE id = ANY ($1::bigint[])`;
// Content no file change uses any more. Rows a running commit has locked (it is about to use
// them) are skipped, and go in a later purge if they are still unused.
const orphan_contents_delete = `
  DELETE FROM contents WHERE (repo_id, sha256) IN (
    SELECT c.repo_id, c.sha256 FROM contents c
    WHERE c.repo_id = $1
      AND NOT EXISTS (SELECT 1 FROM file_changes f WHERE f.repo_id = c.repo_id AND f.content_sha256 = c.sha256)
    FOR UPDATE SKIP LOCKED)
  RETURNING size, blob_key`;

async function purgeInTx(tx: Tx, repoId: number, cutoff: Date) {
  const { rows: branches } = await tx.query(purgeable_branches_select, [repoId, cutoff]);
  const ids = branches.map((b) => b.id);
  await tx.query(purged_leaves_keep, [ids]);
  const commits = await tx.query(commits_delete, [ids]);
  const changes = await tx.query(file_changes_delete, [ids]);
  await tx.query(branches_delete, [ids]);
  const contents = await tx.query(orphan_contents_delete, [repoId]);
  return {
    branches: branches.map(({ name, status, closed_at }) => ({ name, status, closed_at })),
    commits: commits.rowCount ?? 0,
    file_changes: changes.rowCount ?? 0,
    contents: contents.rowCount ?? 0,
    bytes: contents.rows.reduce((sum, r) => sum + Number(r.size), 0),
    blobKeys: contents.rows.flatMap((r) => (r.blob_key ? [r.blob_key as string] : [])),
  };
}

/**
 * Removes merged and abandoned branches closed before `now - older_than`, with their commits,
 * reviews, check runs, comments and proposals, and the content nothing uses any more (admin
 * only). A dry run does exactly the same work in a transaction that is rolled back, so its report
 * is what a real purge would remove at that moment. Blobs are removed after the commit; one that
 * fails to go is only an orphan (docs/blobs.md).
 */
export async function purgeRepo(
  ctx: AppContext,
  _actor: Actor,
  access: RepoAccess,
  input: { older_than: string; dry_run: boolean },
): Promise<PurgeReport> {
  const cutoff = new Date(Date.now() - parseDuration(input.older_than) * 1000);
  const result = await withTx(ctx.pool, async (tx) => {
    const done = await purgeInTx(tx, access.repo.id, cutoff);
    if (input.dry_run) throw new Rollback(done);
    return done;
  });
  if (!input.dry_run) {
    await Promise.allSettled(result.blobKeys.map((key) => ctx.blobs.delete(key)));
  }
  const { blobKeys: _keys, ...report } = result;
  return { older_than: input.older_than, cutoff, dry_run: input.dry_run, ...report };
}
