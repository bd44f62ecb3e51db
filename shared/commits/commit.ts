import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { CommitRequest } from "../api/commits.ts";
import type { Actor } from "../auth/actor.ts";
import { type BranchRow, branch_columns, MAIN, requireActive } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import { firstRowOf, prepared, type Queryable } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { type IfMatch, requireIfMatch } from "../http/conditional.ts";
import { type DecodedContents, NO_DECODED } from "../http/large-json.ts";
import { bodyOfContent, insertBodies, uploadLargeBodies, versionId } from "./content.ts";
import { filesInView, type View, viewOf } from "./view.ts";
import { type Allocated, type WrittenChange, writeCommitRows } from "./write.ts";

/** The spec's Commit record; `files` as `GET commit/{sequence}` lists them (by path, null: deleted). */
export interface CommitRecord {
  sequence: number;
  branch: string;
  message: string;
  author: string;
  created_at: Date;
  files: { path: string; version_id: string | null }[];
}

function commitRecord(
  sequence: number,
  branch: string,
  commit: { author: string; message: string; changes: WrittenChange[] },
  createdAt: Date,
): CommitRecord {
  const files = commit.changes
    .map((c) => ({ path: c.path, version_id: versionId(c.sha256) }))
    // Byte order of the UTF-8 paths, as PostgreSQL's "C" collation sorts them in GET commit.
    .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  return { sequence, branch, message: commit.message, author: commit.author, created_at: createdAt, files };
}

/** Refuses deleting a path that does not exist at the branch head (`view`). */
async function requireDeletedPathsExist(tx: Queryable, view: View, paths: string[]) {
  if (paths.length === 0) return;
  const present = await filesInView(tx, view, paths);
  const missing = paths.find((p) => !present.has(p));
  if (missing !== undefined)
    fail(
      "VALIDATION_FAILED",
      `body.files: cannot delete '${missing}': it does not exist on '${view.branch.name}'`,
    );
}

// Locks the branch and, when it is active, takes the repo's next sequence, in one round trip.
// Lock order as everywhere: the branch row (in the EXISTS), then the repo's counter row.
const branch_lock_and_allocate = prepared<
  // No sequence is taken (null) when the branch is not active.
  BranchRow & { allocated_sequence: number | null; allocated_at: Date | null }
>(
  "branch_lock_and_allocate",
  `WITH branch AS (SELECT ${branch_columns} FROM branches WHERE repo_id = $1 AND name = $2 FOR UPDATE),
   next AS (
     UPDATE repos SET last_sequence = last_sequence + 1
     WHERE id = $1 AND EXISTS (SELECT 1 FROM branch WHERE status = 'active')
     RETURNING last_sequence, date_trunc('milliseconds', clock_timestamp()) AS allocated_at)
   SELECT branch.*, next.last_sequence AS allocated_sequence, next.allocated_at
   FROM branch LEFT JOIN next ON true`,
);

async function lockBranchAndAllocate(
  tx: Tx,
  repoId: number,
  name: string,
): Promise<{ branch: BranchRow; allocated: Allocated }> {
  const row = await firstRowOf(tx, branch_lock_and_allocate([repoId, name]));
  if (!row) fail("BRANCH_NOT_FOUND", `branch '${name}' not found`);
  const { allocated_sequence, allocated_at, ...branch } = row;
  requireActive(branch);
  if (allocated_sequence === null || allocated_at === null)
    throw new Error(`active branch '${name}' was given no sequence`);
  return { branch, allocated: { sequence: allocated_sequence, created_at: allocated_at } };
}

/**
 * The compare-and-swap of a commit: with `expected_head_sequence`, the branch (whose row the caller
 * has locked, so no commit can land in between) must still be at that head, else 409 HEAD_MOVED
 * with the current head, and the transaction (the sequence taken with the lock too) rolls back.
 */
function requireExpectedHead(branch: BranchRow, expected: number | undefined): void {
  if (expected === undefined || branch.head_sequence === expected) return;
  fail(
    "HEAD_MOVED",
    `branch '${branch.name}' is at sequence ${branch.head_sequence}, not the expected ${expected}`,
    { head_sequence: branch.head_sequence },
  );
}

/**
 * Commits file changes from the API, in one transaction with its event. The author is always the
 * caller. `If-Match` (the branch head's entity tag) is checked under the branch lock, like
 * `expected_head_sequence`. Committing to `main` needs maintainer; other branches need writer; the branch must be
 * active. Bodies above the blob threshold are uploaded before the transaction (they are
 * content-addressed, so one left behind by a rollback is harmless). A content that was decoded as
 * the request's body was parsed is a placeholder that `decoded` maps to its bytes. Answers the
 * spec's Commit record, as `GET commit/{sequence}` would.
 */
export async function createCommit(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  input: CommitRequest,
  ifMatch?: IfMatch,
  decoded: DecodedContents = NO_DECODED,
): Promise<CommitRecord> {
  if (input.branch === MAIN && !atLeast(access.role, "maintainer"))
    fail("FORBIDDEN", "committing to 'main' needs the maintainer role");
  const files = [];
  for (const f of input.files)
    files.push({
      path: f.path,
      body: f.content == null ? null : await bodyOfContent(f.path, f.content, f.content_type, decoded),
    });
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
      requireExpectedHead(branch, input.expected_head_sequence);
      requireIfMatch(ifMatch, branch.name, branch.head_sequence);
      // After the bump on purpose: a refusal rolls it back, and the round trip is saved. On main
      // the view needs no query.
      const view = await viewOf(tx, access.repo.id, branch);
      const deleted = changes.filter((c) => !c.sha256).map((c) => c.path);
      await requireDeletedPathsExist(tx, view, deleted);
      // A commit that changes nothing (as git refuses it) is refused by the write statement itself,
      // so the branch lock is held for one round trip fewer (docs/benchmarks.md).
      const commit = { author: actor.identity, message: input.message, changes, unlessUnchangedIn: view };
      const sequence = await writeCommitRows(tx, access.repo, branch, commit, allocated);
      return commitRecord(sequence, branch.name, commit, allocated.created_at);
    });
  });
}
