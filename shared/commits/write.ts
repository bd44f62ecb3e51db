import { unwritablePathProblem } from "../api/path-rules.ts";
import type { BranchRow } from "../branches/branches.ts";
import { firstRowOf, prepared } from "../db/pool.ts";
import type { Tx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { wakeDeliverers } from "../events/notify.ts";
import { cloudEvent, eventCtes, eventValues } from "../events/record.ts";
import { nodeReader } from "../transparency/log.ts";
import { nodesCompletedBy } from "../transparency/merkle.ts";
import { commitHash } from "./hash.ts";
import { newestChangeInView, type View } from "./view.ts";

/** One file change as it is written: the content's hash (already in `contents`), or null to delete. */
export interface WrittenChange {
  path: string;
  sha256: Buffer | null;
  contentType: string | null;
  binary: boolean;
}

/** A commit's place: its sequence and time, allocated from the repo's counter. */
export interface Allocated {
  sequence: number;
  created_at: Date;
}

// Bumped while the branch row is already locked: sequences are gap-free (a rollback undoes the
// bump) and in commit order on every branch. The repo row stays locked until COMMIT, so commits
// to one repo serialize from here on: what follows is kept to one statement.
const next_sequence = `
  UPDATE repos SET last_sequence = last_sequence + 1 WHERE id = $1
  RETURNING last_sequence AS sequence, date_trunc('milliseconds', clock_timestamp()) AS created_at`;
const repo_next_sequence = prepared<Allocated>("repo_next_sequence", next_sequence);

const commit_ctes = `
  commit AS (
    INSERT INTO commits (repo_id, sequence, branch_id, message, author, created_at, prev_hash, hash)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)),
  changes AS (
    INSERT INTO file_changes (branch_id, path, sequence, repo_id, content_sha256, content_type, is_binary)
    SELECT $3, c.path, $2, $1, c.sha256, c.content_type, c.is_binary
    FROM unnest($9::text[], $10::bytea[], $11::text[], $12::boolean[]) AS c (path, sha256, content_type, is_binary)),
  head AS (
    UPDATE branches SET head_sequence = $2, head_hash = $8, updated_at = now() WHERE id = $3),
  log AS (
    INSERT INTO tlog_nodes (repo_id, level, idx, hash)
    SELECT $1, n.level, n.idx, n.hash FROM unnest($13::smallint[], $14::bigint[], $15::bytea[]) AS n (level, idx, hash))`;
// The commit row, its file changes, the new branch head, the transparency log's nodes it completes
// (none for 15 commits of 16: its leaf is its own hash, see merkle.ts) and (unless silent) its
// event with the event's outbox rows: one statement, so one round trip while the locks are held.
// A commit is its leaf, and the nodes it completes are written in the same statement.
const commit_insert = prepared("commit_insert", `WITH ${commit_ctes} SELECT 1`);
const commit_insert_announced = prepared(
  "commit_insert_announced",
  `WITH ${commit_ctes}, ${eventCtes(16)} SELECT 1`,
);

// Whether the commit changes anything in the view at the head it is written on ($22 to $25: the
// head, the parent, its `at` and the branch's own_from; $3 is the branch, $9 to $11 the changes):
// a deletion does (the path was checked to exist), and so does a write whose newest version differs
// in bytes or type. EXISTS stops at the first such file, the first one in the usual commit. The
// statement's snapshot is taken after the branch lock was granted (the lock is the statement before),
// so it sees the commit it waited for; the rows written beside it are not in that snapshot.
const changed_cte = `
  changed AS (
    SELECT EXISTS (
      SELECT 1 FROM unnest($9::text[], $10::bytea[], $11::text[]) AS w (path, sha256, content_type)
      LEFT JOIN ${newestChangeInView(
        {
          branch: "$3",
          at: "$22::bigint",
          parent: "$23::bigint",
          parentAt: "$24::bigint",
          ownFrom: "$25::bigint",
        },
        "w.path",
      )} ON true
      WHERE w.sha256 IS NULL OR v.content_sha256 IS DISTINCT FROM w.sha256
        OR v.content_type IS DISTINCT FROM w.content_type) AS changed)`;
// A commit from the API: the rows of commit_insert_announced, and whether they change anything. The
// rows are written either way; one that changes nothing is refused, and its transaction rolls
// them back. This saves the round trip a lookup before the write took while the branch lock was held.
const commit_insert_if_changed = prepared<{ changed: boolean }>(
  "commit_insert_if_changed",
  `WITH ${commit_ctes}, ${eventCtes(16)}, ${changed_cte} SELECT changed FROM changed`,
);

/** Takes the repo's next sequence; the caller holds the branch row's lock. */
export async function allocateSequence(tx: Tx, repoId: number): Promise<Allocated> {
  const allocated = await firstRowOf(tx, repo_next_sequence([repoId]));
  if (!allocated) throw new Error(`repo ${repoId} has no sequence counter`);
  return allocated;
}

/**
 * Refuses a write of a path the rules forbid (docs/names.md). The commit route refused it already;
 * merge and rebase write paths committed before the rules existed, so every write checks here.
 */
export function refuseUnwritable(changes: WrittenChange[]): void {
  for (const c of changes) {
    const problem = c.sha256 === null ? null : unwritablePathProblem(c.path);
    if (problem)
      fail(
        "INVALID_PATH",
        `'${c.path.slice(0, 80)}' ${problem}; delete it on the branch (a deletion is allowed) and try again`,
      );
  }
}

/** The values of a commit's `commit.created` event, for eventCtes. */
export function eventOf(
  repo: string,
  branch: string,
  sequence: number,
  commit: { author: string; message: string; changes: WrittenChange[] },
): unknown[] {
  const data = {
    repo,
    branch,
    sequence,
    author: commit.author,
    message: commit.message,
    file_count: commit.changes.length,
  };
  const scope = { repo };
  return eventValues(cloudEvent("com.svc.commit.created", data, scope), scope);
}

/** The view's values in changed_cte's order ($22 to $25; commit_group_insert's $26 to $29). */
export const headView = (v: View): unknown[] => [v.at, v.parentId, v.parentAt, v.ownFrom];

/** A commit's hash, chained to `prevHash` (the head it is written on): hash.ts. */
export function chainedHash(
  repo: string,
  branch: string,
  prevHash: string,
  commit: { author: string; message: string; changes: WrittenChange[] },
  { sequence, created_at }: Allocated,
): string {
  return commitHash({
    prevHash,
    sequence,
    repo,
    branch,
    author: commit.author,
    message: commit.message,
    createdAt: created_at.toISOString(),
    files: commit.changes.map((c) => ({ path: c.path, sha256: c.sha256 ? c.sha256.toString("hex") : "" })),
  });
}

/** Refuses a commit that would change nothing, as git does; its transaction rolls back what it wrote. */
export function refuseEmpty(branch: string, head: number): never {
  fail("EMPTY_COMMIT", `nothing to commit: every file is already as '${branch}' has it at sequence ${head}`, {
    head_sequence: head,
  });
}

/**
 * Writes the rows of one commit at an allocated sequence onto a branch whose row the caller has
 * locked: the commit chained to the branch's previous hash, its file changes, the new head and
 * its `commit.created` event. A rebase passes `announce: false` for every replayed commit but the
 * last (the new head), which alone is announced. `branch.head_sequence` and `head_hash` are updated
 * in place for a caller writing several. With `unlessUnchangedIn` (the view at the branch head),
 * a commit that changes nothing in it is refused with EMPTY_COMMIT in the same round trip: a
 * commit from the API that is alone in its group (group-write.ts).
 */
export async function writeCommitRows(
  tx: Tx,
  repo: { id: number; name: string },
  branch: BranchRow,
  commit: {
    author: string;
    message: string;
    changes: WrittenChange[];
    announce?: boolean;
    unlessUnchangedIn?: View;
  },
  { sequence, created_at }: Allocated,
): Promise<number> {
  refuseUnwritable(commit.changes);
  const hash = chainedHash(repo.name, branch.name, branch.head_hash, commit, { sequence, created_at });
  // Leaf i is commit i + 1: sequences are gap-free and allocated under the repo row's lock, so the
  // leaves and nodes it completes are all committed and visible to this statement's snapshot.
  const log = await nodesCompletedBy(sequence - 1, Buffer.from(hash, "hex"), nodeReader(tx, repo.id));
  const values = [
    repo.id,
    sequence,
    branch.id,
    commit.message,
    commit.author,
    created_at,
    branch.head_hash,
    hash,
    commit.changes.map((c) => c.path),
    commit.changes.map((c) => c.sha256),
    commit.changes.map((c) => c.contentType),
    commit.changes.map((c) => c.binary),
    log.map((n) => n.level),
    log.map((n) => n.idx),
    log.map((n) => n.hash),
  ];
  if (commit.announce === false) {
    await tx.query(commit_insert(values));
  } else {
    const event = eventOf(repo.name, branch.name, sequence, commit);
    const view = commit.unlessUnchangedIn;
    if (view === undefined) await tx.query(commit_insert_announced([...values, ...event]));
    else {
      const row = await firstRowOf(tx, commit_insert_if_changed([...values, ...event, ...headView(view)]));
      if (!row?.changed) refuseEmpty(branch.name, branch.head_sequence);
    }
    tx.afterCommit(wakeDeliverers);
  }
  branch.head_sequence = sequence;
  branch.head_hash = hash;
  return sequence;
}

/**
 * Writes one commit onto a branch whose row the caller has locked FOR UPDATE (merge, rebase):
 * the next repo sequence, then the rows. Lock order: the branch row(s), then the repo counter.
 */
export async function writeCommit(
  tx: Tx,
  repo: { id: number; name: string },
  branch: BranchRow,
  commit: { author: string; message: string; changes: WrittenChange[]; announce?: boolean },
): Promise<number> {
  return writeCommitRows(tx, repo, branch, commit, await allocateSequence(tx, repo.id));
}
