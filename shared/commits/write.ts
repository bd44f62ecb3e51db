import type { BranchRow } from "../branches/branches.ts";
import { prepared, type Queryable } from "../db/pool.ts";
import { recordEvent } from "../events/record.ts";
import { commitHash } from "./hash.ts";

/** One file change as it is written: the content's hash (already in `contents`), or null to delete. */
export interface WrittenChange {
  path: string;
  sha256: Buffer | null;
  contentType: string | null;
  binary: boolean;
}

// Bumped as the last step before the rows are written, while the branch row is already locked:
// sequences are gap-free (a rollback undoes the bump) and in commit order on every branch. The
// repo row stays locked only for the few inserts that follow, so commits to one repo serialize
// for about one round of inserts plus COMMIT; docs/architecture.md has the measured cost.
const repo_next_sequence = prepared(
  "repo_next_sequence",
  `
  UPDATE repos SET last_sequence = last_sequence + 1 WHERE id = $1
  RETURNING last_sequence AS sequence, date_trunc('milliseconds', clock_timestamp()) AS created_at`,
);
// The commit row, its file changes and the new branch head in one statement: each round trip
// saved here is time the branch and counter locks are not held.
const commit_insert_with_changes = prepared(
  "commit_insert_with_changes",
  `WITH commit AS (
     INSERT INTO commits (repo_id, sequence, branch_id, message, author, created_at, prev_hash, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)),
   changes AS (
     INSERT INTO file_changes (branch_id, path, sequence, repo_id, content_sha256, content_type, is_binary)
     SELECT $3, c.path, $2, $1, c.sha256, c.content_type, c.is_binary
     FROM unnest($9::text[], $10::bytea[], $11::text[], $12::boolean[]) AS c (path, sha256, content_type, is_binary))
   UPDATE branches SET head_sequence = $2, head_hash = $8, updated_at = now() WHERE id = $3`,
);

/**
 * Writes one commit onto a branch whose row the caller has locked FOR UPDATE: the next repo
 * sequence, the commit row chained to the branch's previous hash, its file changes, the new
 * branch head, and its `commit.created` event. Every commit — from the API, a merge or a rebase —
 * is written here. Lock order: the branch row(s) first, then the repo counter row. A rebase passes
 * `announce: false`: its replayed commits are announced by its own `branch.rebased` event.
 * `branch.head_sequence` and `head_hash` are updated in place for a caller writing several.
 */
export async function writeCommit(
  tx: Queryable,
  repo: { id: number; name: string },
  branch: BranchRow,
  commit: { author: string; message: string; changes: WrittenChange[]; announce?: boolean },
): Promise<number> {
  const { rows } = await tx.query(repo_next_sequence([repo.id]));
  const { sequence, created_at } = rows[0] as { sequence: number; created_at: Date };
  const hash = commitHash({
    prevHash: branch.head_hash,
    sequence,
    repo: repo.name,
    branch: branch.name,
    author: commit.author,
    message: commit.message,
    createdAt: created_at.toISOString(),
    files: commit.changes.map((c) => ({ path: c.path, sha256: c.sha256 ? c.sha256.toString("hex") : "" })),
  });
  await tx.query(
    commit_insert_with_changes([
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
    ]),
  );
  if (commit.announce !== false)
    await recordEvent(
      tx,
      "com.svc.commit.created",
      {
        repo: repo.name,
        branch: branch.name,
        sequence,
        author: commit.author,
        message: commit.message,
        file_count: commit.changes.length,
      },
      { repo: repo.name },
    );
  branch.head_sequence = sequence;
  branch.head_hash = hash;
  return sequence;
}
