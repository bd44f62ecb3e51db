import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { CommitRequest } from "../api/commits.ts";
import type { Actor } from "../auth/actor.ts";
import { type BranchRow, branch_columns, MAIN, requireActive } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import { prepared, type Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { bodyOf, insertBodies, uploadLargeBodies } from "./content.ts";
import { filesInView, viewOf } from "./view.ts";
import { type Allocated, type WrittenChange, writeCommitRows } from "./write.ts";

/** Refuses deleting a path that does not exist at the branch head. */
async function requireDeletedPathsExist(
  tx: Queryable,
  repoId: number,
  branch: Parameters<typeof viewOf>[2],
  paths: string[],
) {
  if (paths.length === 0) return;
  const present = await filesInView(tx, await viewOf(tx, repoId, branch), paths);
  const missing = paths.find((p) => !present.has(p));
  if (missing !== undefined)
    fail(
      "VALIDATION_FAILED",
      `body.files: cannot delete '${missing}': it does not exist on '${branch.name}'`,
    );
}

// Locks the branch and, when it is active, takes the repo's next sequence, in one round trip.
// Lock order as everywhere: the branch row (in the EXISTS), then the repo's counter row.
const branch_lock_and_allocate = prepared(
  "branch_lock_and_allocate",
  `WITH branch AS (SELECT ${branch_columns} FROM branches WHERE repo_id = $1 AND name = $2 FOR UPDATE),
   next AS (
     UPDATE repos SET last_sequence = last_sequence + 1
     WHERE id = $1 AND EXISTS (SELECT 1 FROM branch WHERE status = 'active')
     RETURNING last_sequence, date_trunc('milliseconds', clock_timestamp()) AS allocated_at)
   SELECT branch.*, next.last_sequence AS allocated_sequence, next.allocated_at FROM branch LEFT JOIN next ON true`,
);

async function lockBranchAndAllocate(
  tx: Queryable,
  repoId: number,
  name: string,
): Promise<{ branch: BranchRow; allocated: Allocated }> {
  const { rows } = await tx.query(branch_lock_and_allocate([repoId, name]));
  if (!rows[0]) fail("BRANCH_NOT_FOUND", `branch '${name}' not found`);
  const { allocated_sequence, allocated_at, ...branch } = rows[0];
  requireActive(branch as BranchRow);
  return {
    branch: branch as BranchRow,
    allocated: { sequence: allocated_sequence, created_at: allocated_at },
  };
}

/**
 * Commits file changes from the API, in one transaction with its event. The author is always the
 * caller. Committing to `main` needs maintainer; other branches need writer; the branch must be
 * active. Bodies above the blob threshold are uploaded before the transaction (they are
 * content-addressed, so one left behind by a rollback is harmless).
 */
export async function createCommit(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  input: CommitRequest,
): Promise<{ sequence: number }> {
  if (input.branch === MAIN && !atLeast(access.role, "maintainer"))
    fail("FORBIDDEN", "committing to 'main' needs the maintainer role");
  const files = input.files.map((f) => ({
    path: f.path,
    body: f.content == null ? null : bodyOf(f.path, Buffer.from(f.content, "base64"), f.content_type),
  }));
  const bodies = files.flatMap((f) => (f.body ? [f.body] : []));
  const threshold = ctx.config.SVC_BLOB_THRESHOLD_BYTES;
  await uploadLargeBodies(ctx.blobs, access.repo.id, bodies, threshold);
  const changes: WrittenChange[] = files.map((f) => ({
    path: f.path,
    sha256: f.body?.sha256 ?? null,
    contentType: f.body?.contentType ?? null,
    binary: f.body?.binary ?? false,
  }));

  return withTx(ctx.pool, async (tx) => {
    // Content first: it needs no branch lock, so the lock is held only for what follows.
    await insertBodies(tx, access.repo.id, bodies, threshold);
    // The gate is released when the work is done, before COMMIT: the next commit of this repo
    // then waits in PostgreSQL only for that COMMIT.
    return ctx.commitGate.run(access.repo.id, async () => {
      const { branch, allocated } = await lockBranchAndAllocate(tx, access.repo.id, input.branch);
      // After the bump on purpose: a refusal rolls it back, and the round trip is saved.
      await requireDeletedPathsExist(
        tx,
        access.repo.id,
        branch,
        changes.filter((c) => !c.sha256).map((c) => c.path),
      );
      const sequence = await writeCommitRows(
        tx,
        access.repo,
        branch,
        { author: actor.identity, message: input.message, changes },
        allocated,
      );
      return { sequence };
    });
  });
}
