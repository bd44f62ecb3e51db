import type { RepoAccess } from "../access/roles.ts";
import type { Queryable } from "../db/pool.ts";
import { fail } from "../errors.ts";
import { byPathBytes } from "./hash.ts";

/** Most commits one chain request may return. */
export const MAX_CHAIN_SPAN = 1000;

const chain_commits_select = `
  SELECT c.sequence, b.name AS branch, c.author, c.message, c.created_at, c.prev_hash, c.hash
  FROM commits c JOIN branches b ON b.id = c.branch_id
  WHERE c.repo_id = $1 AND c.sequence BETWEEN $2 AND $3
  ORDER BY c.sequence`;
const chain_files_select = `
  SELECT f.sequence, f.path, f.content_sha256
  FROM commits c JOIN file_changes f ON f.repo_id = c.repo_id AND f.sequence = c.sequence
  WHERE c.repo_id = $1 AND c.sequence BETWEEN $2 AND $3`;

/**
 * The commits with sequence in [from, to] and every input of their hashes: with these a client
 * recomputes each hash and checks that each `prev_hash` is the hash of the branch's previous
 * commit (docs/hash-chain.md).
 */
export async function readChain(db: Queryable, access: RepoAccess, q: { from: number; to: number }) {
  if (q.to < q.from) fail("VALIDATION_FAILED", "query.to: must not be less than query.from");
  if (q.to - q.from + 1 > MAX_CHAIN_SPAN)
    fail("VALIDATION_FAILED", `query: at most ${MAX_CHAIN_SPAN} commits per request`);
  const args = [access.repo.id, q.from, q.to];
  const [commits, files] = await Promise.all([
    db.query(chain_commits_select, args),
    db.query(chain_files_select, args),
  ]);
  const filesBySeq = new Map<number, { path: string; content_sha256: string }[]>();
  for (const f of files.rows) {
    const list = filesBySeq.get(f.sequence) ?? [];
    list.push({ path: f.path, content_sha256: f.content_sha256 ? f.content_sha256.toString("hex") : "" });
    filesBySeq.set(f.sequence, list);
  }
  return commits.rows.map((c) => ({
    sequence: c.sequence,
    repo: access.repo.name,
    branch: c.branch,
    author: c.author,
    message: c.message,
    created_at: (c.created_at as Date).toISOString(),
    files: (filesBySeq.get(c.sequence) ?? []).sort(byPathBytes),
    prev_hash: c.prev_hash,
    hash: c.hash,
  }));
}
