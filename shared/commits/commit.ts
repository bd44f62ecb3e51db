import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { CommitRequest } from "../api/commits.ts";
import type { Actor } from "../auth/actor.ts";
import { MAIN, requireActive, requireBranch } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { bodyOf, insertBodies, uploadLargeBodies } from "./content.ts";
import { filesInView, viewOf } from "./view.ts";
import { type WrittenChange, writeCommit } from "./write.ts";

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
    const branch = await requireBranch(tx, access.repo.id, input.branch, "update");
    requireActive(branch);
    await requireDeletedPathsExist(
      tx,
      access.repo.id,
      branch,
      changes.filter((c) => !c.sha256).map((c) => c.path),
    );
    const sequence = await writeCommit(tx, access.repo, branch, {
      author: actor.identity,
      message: input.message,
      changes,
    });
    return { sequence };
  });
}
