import type pg from "pg";

/** Thrown inside `withTx` to roll back on purpose and hand `value` back to the caller (a dry run). */
export class Rollback<T> extends Error {
  constructor(readonly value: T) {
    super("rollback");
  }
}

/** Deadlock detected, serialization failure: the transaction lost a race and may simply run again. */
const RETRYABLE = new Set(["40P01", "40001"]);
const ATTEMPTS = 3;

/**
 * Runs `work` in one transaction on its own client: COMMIT when it returns, ROLLBACK when it throws.
 * This is the only place in Quire that issues BEGIN, so every mutation is whole or absent.
 * Throwing `new Rollback(v)` rolls back and returns `v`, for dry runs that must change nothing.
 * A transaction that PostgreSQL aborted as a deadlock victim is run again (up to 3 times), so
 * `work` must not have effects outside the transaction that a second run would repeat wrongly.
 */
export async function withTx<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(pool, work);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= ATTEMPTS || code === undefined || !RETRYABLE.has(code)) throw err;
    }
  }
}

async function once<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch {
      broken = true; // the connection is gone; do not hand it back to the pool
    }
    if (err instanceof Rollback) return err.value as T;
    throw err;
  } finally {
    client.release(broken);
  }
}
