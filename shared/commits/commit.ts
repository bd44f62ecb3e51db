import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { CommitRequest } from "../api/commits.ts";
import type { Actor } from "../auth/actor.ts";
import { MAIN, requireActive, requireBranch } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { type Body, bodyOf, insertBodies, uploadLargeBodies } from "./content.ts";
import { commitHash } from "./hash.ts";
import { filesInView, resolveView } from "./view.ts";

/** One change of a commit as it is written: a body, or null for a deletion. */
interface Change {
  path: string;
  body: Body | null;
}

// Bumped as the last step before the rows are written, while the branch row is already locked:
// sequences are gap-free (a rollback undoes the bump) and in commit order on every branch. The
// repo row stays locked only for the few inserts that follow, so commits to one repo serialize
// for about one round of inserts plus COMMIT; see docs/architecture.md for the measured cost.
const repo_next_sequence = `
  UPDATE repos SET last_sequence = last_sequence + 1 WHERE id = $1
  RETURNING last_sequence AS sequence, date_trunc('milliseconds', clock_timestamp()) AS created_at`;
const commit_insert = `
  INSERT INTO commits (repo_id, sequence, branch_id, message, author, created_at, prev_hash, hash)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
const file_change_insert_batch = `
  INSERT INTO file_changes (branch_id, path, sequence, repo_id, content_sha256, content_type, is_binary)
  SELECT $1, c.path, $2, $3, c.sha256, c.content_type, c.is_binary
  FROM unnest($4::text[], $5::bytea[], $6::text[], $7::boolean[]) AS c (path, sha256, content_type, is_binary)`;
const branch_update_head = `UPDATE branches SET head_sequence = $2, head_hash = $3, updated_at = now() WHERE id = $1`;
/** Refuses deleting a path that does not exist at the branch head. */
async function requireDeletedPathsExist(
  tx: Queryable,
  repoId: number,
  branchName: string,
  paths: string[],
): Promise<void> {
  if (paths.length === 0) return;
  const present = await filesInView(tx, await resolveView(tx, repoId, branchName, undefined), paths);
  const missing = paths.find((p) => !present.has(p));
  if (missing !== undefined)
    fail("VALIDATION_FAILED", `body.files: cannot delete '${missing}': it does not exist on '${branchName}'`);
}

/**
 * Writes one commit: all its file changes, its sequence, its place in the branch's hash chain and
 * its `commit.created` event, in one transaction. The author is always the caller. Committing to
 * `main` needs maintainer; other branches need writer. Lock order: the branch row, then the repo
 * counter row (merges take `main` and the branch before the counter too).
 */
export async function createCommit(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  input: CommitRequest,
): Promise<{ sequence: number }> {
  if (input.branch === MAIN && !atLeast(access.role, "maintainer"))
    fail("FORBIDDEN", "committing to 'main' needs the maintainer role");
  const changes: Change[] = input.files.map((f) => ({
    path: f.path,
    body: f.content == null ? null : bodyOf(f.path, Buffer.from(f.content, "base64"), f.content_type),
  }));
  const bodies = changes.flatMap((c) => (c.body ? [c.body] : []));
  const threshold = ctx.config.SVC_BLOB_THRESHOLD_BYTES;
  await uploadLargeBodies(ctx.blobs, access.repo.id, bodies, threshold);

  return withTx(ctx.pool, async (tx) => {
    const branch = await requireBranch(tx, access.repo.id, input.branch, "update");
    requireActive(branch);
    await requireDeletedPathsExist(
      tx,
      access.repo.id,
      branch.name,
      changes.filter((c) => !c.body).map((c) => c.path),
    );
    await insertBodies(tx, access.repo.id, bodies, threshold);

    const { rows } = await tx.query(repo_next_sequence, [access.repo.id]);
    const { sequence, created_at } = rows[0] as { sequence: number; created_at: Date };
    const hash = commitHash({
      prevHash: branch.head_hash,
      sequence,
      repo: access.repo.name,
      branch: branch.name,
      author: actor.identity,
      message: input.message,
      createdAt: created_at.toISOString(),
      files: changes.map((c) => ({ path: c.path, sha256: c.body ? c.body.sha256.toString("hex") : "" })),
    });
    await tx.query(commit_insert, [
      access.repo.id,
      sequence,
      branch.id,
      input.message,
      actor.identity,
      created_at,
      branch.head_hash,
      hash,
    ]);
    await tx.query(file_change_insert_batch, [
      branch.id,
      sequence,
      access.repo.id,
      changes.map((c) => c.path),
      changes.map((c) => c.body?.sha256 ?? null),
      changes.map((c) => c.body?.contentType ?? null),
      changes.map((c) => c.body?.binary ?? false),
    ]);
    await tx.query(branch_update_head, [branch.id, sequence, hash]);
    await recordEvent(
      tx,
      "com.svc.commit.created",
      {
        repo: access.repo.name,
        branch: branch.name,
        sequence,
        author: actor.identity,
        message: input.message,
        file_count: changes.length,
      },
      { repo: access.repo.name },
    );
    return { sequence };
  });
}
