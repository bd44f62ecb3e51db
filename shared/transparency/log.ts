import type pg from "pg";
import type { RepoRow } from "../access/roles.ts";
import { publicUrl } from "../ci/urls.ts";
import type { AppContext } from "../context.ts";
import { firstRowOf, prepared, type Queryable } from "../db/pool.ts";
import { fail } from "../errors.ts";
import {
  consistencyPlan,
  EMPTY_ROOT,
  inclusionPlan,
  type NodeReader,
  type ProofPlan,
  proofFrom,
  resolveNodes,
  rootPlan,
} from "./merkle.ts";
import { checkpointText, signatureLine, verifierKey } from "./note.ts";

type LogContext = Pick<AppContext, "pool" | "logSigner" | "config" | "selfUrl">;

/**
 * The name the log's key signs under, and the start of every repo log's origin: the service's
 * public address without its scheme (`quire.example.com`, or `127.0.0.1:8080` in development),
 * as C2SP checkpoints name logs.
 */
export const logKeyName = (ctx: Pick<LogContext, "config" | "selfUrl">): string =>
  new URL(publicUrl(ctx)).host;

/** A repo log's origin line: `<key name>/<repo>`. */
export const logOrigin = (ctx: Pick<LogContext, "config" | "selfUrl">, repo: string): string =>
  `${logKeyName(ctx)}/${repo}`;

/** The log's verifier key (`<name>+<hash>+<key>`), as signed-note verifiers take it. */
export async function publishedLogKey(ctx: Omit<LogContext, "pool">): Promise<string> {
  return verifierKey(logKeyName(ctx), await ctx.logSigner.publicKey());
}

// The committed size of the log: leaf i is the commit with sequence i + 1, and sequences have no gaps.
const tlog_size = prepared<{ size: number }>(
  "tlog_size",
  "SELECT last_sequence AS size FROM repos WHERE id = $1",
);

/**
 * SQL for the log's leaf hash of a commit whose `hash` (hex text) is `hashColumn`: RFC 9162's
 * SHA-256(0x00 || leaf), the leaf being the hash's 32 bytes. Proofs read leaves with it, and purge
 * keeps a removed commit's leaf with it.
 */
export const commitLeafSql = (hashColumn: string) => `sha256('\\x00'::bytea || decode(${hashColumn}, 'hex'))`;

// Stored hashes: one primary-key probe each, O(log n) of them however long the history. A leaf
// (level 0) is its commit's hash, or the leaf row purge kept when it removed the commit (0022);
// the stored levels are in tlog_nodes. A scalar subquery per wanted node rather than a join, so
// that each is one index probe whatever the planner guesses of the array's length: with the join,
// proofs on the bench's million-commit repo took about 25 ms at p50 (docs/verifiable-history.md).
const tlog_nodes_read = prepared<{ i: number; hash: Buffer | null }>(
  "tlog_nodes_read",
  `SELECT want.i::int AS i,
          CASE WHEN want.level = 0 THEN coalesce(
            (SELECT ${commitLeafSql("c.hash")} FROM commits c
             WHERE c.repo_id = $1 AND c.sequence = want.idx + 1),
            (SELECT n.hash FROM tlog_nodes n WHERE n.repo_id = $1 AND n.level = 0 AND n.idx = want.idx))
          ELSE (SELECT n.hash FROM tlog_nodes n WHERE n.repo_id = $1 AND n.level = want.level AND n.idx = want.idx)
          END AS hash
   FROM unnest($2::smallint[], $3::bigint[]) WITH ORDINALITY AS want (level, idx, i)`,
);

/** Reads a repo's stored hashes (merkle.ts, NodeReader): leaves and the stored levels. */
export const nodeReader =
  (db: Queryable, repoId: number): NodeReader =>
  async (refs) => {
    const { rows } = await db.query(
      tlog_nodes_read([repoId, refs.map((n) => n.level), refs.map((n) => n.idx)]),
    );
    return rows.map((row) => {
      if (!row.hash) throw new Error(`the log has no node ${JSON.stringify(refs[row.i - 1])}`);
      return row.hash;
    });
  };

// Witnesses' signature lines for one tree size (shared/transparency/cosign.ts), in a stable order.
const tlog_cosignature_lines = prepared<{ line: string }>(
  "tlog_cosignature_lines",
  "SELECT line FROM tlog_cosignatures WHERE repo_id = $1 AND size = $2 ORDER BY witness_key",
);

export async function treeSize(db: Queryable, repoId: number): Promise<number> {
  const head = await firstRowOf(db, tlog_size([repoId]));
  if (!head) fail("REPO_NOT_FOUND", "repo not found");
  return head.size;
}

/** Reads a plan's nodes and folds them into the proof's hashes. */
async function readProof(db: Queryable, repoId: number, plan: ProofPlan): Promise<Buffer[]> {
  if (plan.nodes.length === 0) return [];
  return proofFrom(plan, await resolveNodes(plan.nodes, nodeReader(db, repoId)));
}

/**
 * The repo's current checkpoint as a signed note: origin, size, root, the log key's signature, and
 * the signature lines of the witnesses that cosigned this size (docs/verifiable-history.md,
 * "Witnesses"). Ed25519 is deterministic, so every instance serves the same bytes for the same tree.
 */
export async function signedCheckpoint(ctx: LogContext, repo: RepoRow): Promise<string> {
  const size = await treeSize(ctx.pool, repo.id);
  const text = checkpointText({
    origin: logOrigin(ctx, repo.name),
    size,
    root: await rootAt(ctx.pool, repo.id, size),
  });
  const [publicKey, signature, cosignatures] = await Promise.all([
    ctx.logSigner.publicKey(),
    ctx.logSigner.sign(Buffer.from(text)),
    ctx.pool.query(tlog_cosignature_lines([repo.id, size])),
  ]);
  const lines = cosignatures.rows.map((r) => r.line).join("");
  return `${text}\n${signatureLine(logKeyName(ctx), publicKey, signature)}${lines}`;
}

/** The root of the repo's tree of `size` leaves (at most its current size): O(log n) node reads. */
export async function rootAt(db: Queryable, repoId: number, size: number): Promise<Buffer> {
  if (size === 0) return EMPTY_ROOT;
  const [root] = await readProof(db, repoId, rootPlan(size));
  if (!root) throw new Error(`the log has no root for size ${size}`);
  return root;
}

const b64 = (hashes: Buffer[]) => hashes.map((h) => h.toString("base64"));

function requireTreeSize(size: number, current: number, what: string): void {
  if (size > current) fail("SEQUENCE_OUT_OF_RANGE", `${what} ${size} is beyond the log's size ${current}`);
}

/** The proof that the commit at `sequence` is leaf `sequence - 1` of the repo's tree of `size` leaves. */
export async function inclusionProof(
  pool: pg.Pool,
  repo: RepoRow,
  q: { sequence: number; size: number },
): Promise<{ leaf_index: number; tree_size: number; hashes: string[] }> {
  if (q.sequence < 1 || q.sequence > q.size)
    fail("SEQUENCE_OUT_OF_RANGE", `sequence must be from 1 to size (${q.size}), not ${q.sequence}`);
  requireTreeSize(q.size, await treeSize(pool, repo.id), "size");
  const hashes = await readProof(pool, repo.id, inclusionPlan(q.sequence - 1, q.size));
  return { leaf_index: q.sequence - 1, tree_size: q.size, hashes: b64(hashes) };
}

/** The proof that the repo's tree of `from` leaves is a prefix of its tree of `to` leaves. */
export async function consistencyProof(
  pool: pg.Pool,
  repo: RepoRow,
  q: { from: number; to: number },
): Promise<{ from: number; to: number; hashes: string[] }> {
  if (q.from < 1 || q.from > q.to)
    fail("SEQUENCE_OUT_OF_RANGE", `from must be from 1 to 'to' (${q.to}), not ${q.from}`);
  requireTreeSize(q.to, await treeSize(pool, repo.id), "to");
  const hashes = await readProof(pool, repo.id, consistencyPlan(q.from, q.to));
  return { from: q.from, to: q.to, hashes: b64(hashes) };
}
