import type { Queryable } from "../db/pool.ts";
import type { HeldKey } from "./scope.ts";

/** How long a key remembers its answer. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long an `in_progress` key may go without an answer before a retry may take it over (its
 * holder crashed before any transaction of its work committed). Far above any handler's run time;
 * a holder that is merely slow loses its mark and rolls back, so the work is still done once.
 */
export const STALE_MS = 60 * 1000;

/** What a request with a key asks for: who, which key, and what for. */
export interface KeyRequest {
  identity: string;
  key: string;
  method: string;
  path: string;
  bodySha256: Buffer;
}

/** A stored answer, replayed as it was sent (without its x-request-id). */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  /** The JSON text sent, or null for a reply without a body (204). */
  body: string | null;
}

/** What the key's row says to a request that could not take it. */
export type KeyState =
  | { kind: "mismatch" }
  | { kind: "in_progress" }
  /** The work committed, but its holder died before storing the answer. */
  | { kind: "applied" }
  | { kind: "complete"; answer: StoredAnswer };

// Takes the key: a new row, or an expired one started over, or an abandoned in-progress row of the
// same request retaken with a new lease. Waits for a transaction that is marking the row `applied`
// and then sees the marked row (READ COMMITTED re-checks the WHERE), so it never retakes done work.
const take = `
  INSERT INTO idempotency_keys AS k (identity, key, method, path, body_sha256, state, lease, created_at)
  VALUES ($1, $2, $3, $4, $5, 'in_progress', $6, $7)
  ON CONFLICT (identity, key) DO UPDATE
    SET method = EXCLUDED.method, path = EXCLUDED.path, body_sha256 = EXCLUDED.body_sha256,
        state = 'in_progress', lease = EXCLUDED.lease, created_at = EXCLUDED.created_at,
        status = NULL, response_headers = NULL, response_body = NULL
    WHERE k.created_at <= $8
       OR (k.state = 'in_progress' AND k.created_at <= $9 AND k.method = EXCLUDED.method
           AND k.path = EXCLUDED.path AND k.body_sha256 = EXCLUDED.body_sha256)
  RETURNING lease::text`;

const read = `
  SELECT method, path, body_sha256, state, status, response_headers, response_body, created_at <= $4 AS stale
  FROM idempotency_keys WHERE identity = $1 AND key = $2 AND created_at > $3`;

/** Takes the key for this request (a HeldKey), or says what the key's row holds instead. */
export async function takeKey(
  db: Queryable,
  req: KeyRequest,
  lease: string,
  now: Date,
): Promise<HeldKey | KeyState> {
  const expired = new Date(now.getTime() - KEY_TTL_MS);
  const stale = new Date(now.getTime() - STALE_MS);
  // A row deleted or expired between the two statements: take again (a third miss is a row that
  // comes and goes under a burst of retries: answer as if in progress).
  for (let attempt = 0; attempt < 3; attempt++) {
    const { rows } = await db.query(take, [
      req.identity,
      req.key,
      req.method,
      req.path,
      req.bodySha256,
      lease,
      now,
      expired,
      stale,
    ]);
    if (rows[0]?.lease === lease)
      return { identity: req.identity, key: req.key, lease, open: true, applied: false };
    const row = (await db.query(read, [req.identity, req.key, expired, stale])).rows[0];
    if (row) return stateOf(row, req);
  }
  return { kind: "in_progress" };
}

function stateOf(row: Record<string, unknown>, req: KeyRequest): KeyState {
  const same =
    row["method"] === req.method &&
    row["path"] === req.path &&
    req.bodySha256.equals(row["body_sha256"] as Buffer);
  if (!same) return { kind: "mismatch" };
  if (row["state"] === "in_progress") return { kind: "in_progress" };
  // Applied: between its COMMIT and its stored answer; a holder still at it after a minute is gone.
  if (row["state"] === "applied") return row["stale"] ? { kind: "applied" } : { kind: "in_progress" };
  return {
    kind: "complete",
    answer: {
      status: row["status"] as number,
      headers: row["response_headers"] as Record<string, string>,
      body: row["response_body"] as string | null,
    },
  };
}

const store = `
  UPDATE idempotency_keys
  SET state = 'complete', status = $4, response_headers = $5, response_body = $6
  WHERE identity = $1 AND key = $2 AND lease = $3 AND state IN ('in_progress', 'applied')`;

/** Stores the answer of the held key, unless another request has retaken it. */
export async function storeAnswer(db: Queryable, key: HeldKey, answer: StoredAnswer): Promise<void> {
  await db.query(store, [key.identity, key.key, key.lease, answer.status, answer.headers, answer.body]);
}

const release = `
  DELETE FROM idempotency_keys WHERE identity = $1 AND key = $2 AND lease = $3 AND state = 'in_progress'`;

/**
 * Lets go of a key whose work failed (5xx) before any of it committed, so a retry does the work.
 * A key already `applied` is kept: its work is done and must not be done again.
 */
export async function releaseKey(db: Queryable, key: HeldKey): Promise<void> {
  await db.query(release, [key.identity, key.key, key.lease]);
}

const sweep = `
  DELETE FROM idempotency_keys WHERE (identity, key) IN (
    SELECT identity, key FROM idempotency_keys WHERE created_at <= $1 ORDER BY created_at LIMIT 1000)`;

/** Deletes up to 1000 expired keys, oldest first; returns how many. */
export async function sweepExpiredKeys(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query(sweep, [new Date(now.getTime() - KEY_TTL_MS)]);
  return rowCount ?? 0;
}
