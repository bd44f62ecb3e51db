import { atLeast, type RepoAccess } from "../access/roles.ts";
import type { CommitRequest } from "../api/commits.ts";
import type { Actor } from "../auth/actor.ts";
import { type BranchRow, branch_columns, MAIN, requireActive } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import { firstRowOf, prepared } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { type IfMatch, requireIfMatch } from "../http/conditional.ts";
import { type DecodedContents, NO_DECODED } from "../http/large-json.ts";
import { type HeldKey, heldKey, markKeyApplied } from "../idempotency/scope.ts";
import { type Body, bodyOfContent, insertBodies, uploadLargeBodies, versionId } from "./content.ts";
import { writeCommits } from "./group-write.ts";
import type { Turn } from "./groups.ts";
import { viewOf } from "./view.ts";
import type { Allocated, WrittenChange } from "./write.ts";

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

// Locks the branch and, when it is active, takes the repo's next $3 sequences (one per commit of a
// group), in one round trip. Lock order as everywhere: the branch row (in the EXISTS), then the
// repo's counter row. The group's commits share the time taken here.
const branch_lock_and_allocate = prepared<
  // No sequence is taken (null) when the branch is not active.
  BranchRow & { last_allocated: number | null; allocated_at: Date | null }
>(
  "branch_lock_and_allocate",
  `WITH branch AS (SELECT ${branch_columns} FROM branches WHERE repo_id = $1 AND name = $2 FOR UPDATE),
   next AS (
     UPDATE repos SET last_sequence = last_sequence + $3
     WHERE id = $1 AND EXISTS (SELECT 1 FROM branch WHERE status = 'active')
     RETURNING last_sequence, date_trunc('milliseconds', clock_timestamp()) AS allocated_at)
   SELECT branch.*, next.last_sequence AS last_allocated, next.allocated_at
   FROM branch LEFT JOIN next ON true`,
);

/** Locks the branch named `name` and takes `count` sequences for commits to it: theirs, in order. */
async function lockBranchAndAllocate(
  tx: Tx,
  repoId: number,
  name: string,
  count: number,
): Promise<{ branch: BranchRow; allocated: Allocated[] }> {
  const row = await firstRowOf(tx, branch_lock_and_allocate([repoId, name, count]));
  if (!row) fail("BRANCH_NOT_FOUND", `branch '${name}' not found`);
  const { last_allocated, allocated_at, ...branch } = row;
  requireActive(branch);
  if (last_allocated === null || allocated_at === null)
    throw new Error(`active branch '${name}' was given no sequence`);
  const first = last_allocated - count + 1;
  const allocated = Array.from({ length: count }, (_, k) => ({
    sequence: first + k,
    created_at: allocated_at,
  }));
  return { branch, allocated };
}

/**
 * The compare-and-swap of a commit: with `expected_head_sequence`, the branch (whose row the caller
 * has locked, so no commit can land in between) must still be at that head (`head`, the one the
 * commit before it in its group left), else 409 HEAD_MOVED with the current head, and the
 * transaction (the sequence taken with the lock too) rolls back.
 */
function requireExpectedHead(branch: string, head: number, expected: number | undefined): void {
  if (expected === undefined || head === expected) return;
  fail("HEAD_MOVED", `branch '${branch}' is at sequence ${head}, not the expected ${expected}`, {
    head_sequence: head,
  });
}

/** A commit request made ready for its group: bodies hashed, the large ones uploaded already. */
interface PreparedCommit {
  input: CommitRequest;
  author: string;
  ifMatch: IfMatch | undefined;
  bodies: Body[];
  changes: WrittenChange[];
  /** The request's Idempotency-Key, marked in whichever transaction writes the commit. */
  key: HeldKey | undefined;
}

/**
 * Commits file changes from the API, in one transaction with its event. The author is always the
 * caller. `If-Match` (the branch head's entity tag) is checked under the branch lock, like
 * `expected_head_sequence`. Committing to `main` needs maintainer; other branches need writer; the branch must be
 * active. Bodies above the blob threshold are uploaded before the transaction (they are
 * content-addressed, so one left behind by a rollback is harmless). A content that was decoded as
 * the request's body was parsed is a placeholder that `decoded` maps to its bytes. Answers the
 * spec's Commit record, as `GET commit/{sequence}` would. Commits that arrive for the same branch
 * together share their transaction (groups.ts), each with its own sequence, event and answer.
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
  await uploadLargeBodies(ctx.blobs, access.repo.id, bodies, ctx.config.SVC_BLOB_THRESHOLD_BYTES);
  const changes: WrittenChange[] = files.map((f) => ({
    path: f.path,
    sha256: f.body?.sha256 ?? null,
    contentType: f.body?.contentType ?? null,
    binary: f.body?.binary ?? false,
  }));
  const commit = { input, author: actor.identity, ifMatch, bodies, changes, key: heldKey() };
  const bytes = bodies.reduce((n, b) => n + b.data.length, 0);
  return ctx.commitGroups.run(access.repo.id, input.branch, commit, bytes, (turn) =>
    writeGroup(ctx, access.repo, input.branch, turn),
  );
}

/**
 * Writes a group of commits to one branch in one transaction, in their order: their contents, the
 * branch lock with a sequence for each, then every commit in one statement (group-write.ts). The
 * group's turn ends when the work is done, before COMMIT: the next group then waits in PostgreSQL
 * only for that COMMIT.
 */
function writeGroup(
  ctx: AppContext,
  repo: RepoAccess["repo"],
  branchName: string,
  turn: Turn<PreparedCommit>,
): Promise<CommitRecord[]> {
  return withTx(ctx.pool, async (tx) => {
    const { items, leave } = await turn();
    try {
      // Content first: it needs no branch lock, so the lock is held only for what follows.
      const bodies = items.flatMap((c) => c.bodies);
      await insertBodies(tx, repo.id, bodies, ctx.config.SVC_BLOB_THRESHOLD_BYTES);
      const { branch, allocated } = await lockBranchAndAllocate(tx, repo.id, branchName, items.length);
      for (const [k, c] of items.entries()) {
        const head = k === 0 ? branch.head_sequence : (allocated[k - 1] as Allocated).sequence;
        requireExpectedHead(branch.name, head, c.input.expected_head_sequence);
        requireIfMatch(c.ifMatch, branch.name, head);
      }
      // After the bump on purpose: a refusal rolls it back, and the round trip is saved. On main
      // the view needs no query.
      const view = await viewOf(tx, repo.id, branch);
      const members = items.map((c) => ({ author: c.author, message: c.input.message, changes: c.changes }));
      await writeCommits(tx, repo, branch, view, members, allocated);
      // The leader's own key is marked by withTx, as every transaction marks its request's.
      for (const c of items.slice(1)) await markKeyApplied(tx, c.key);
      return members.map((m, k) => {
        const { sequence, created_at } = allocated[k] as Allocated;
        return commitRecord(sequence, branch.name, m, created_at);
      });
    } finally {
      leave();
    }
  });
}
