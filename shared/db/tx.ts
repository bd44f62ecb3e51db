import type pg from "pg";

/** Thrown inside `withTx` to roll back on purpose and hand `value` back to the caller (a dry run). */
export class Rollback<T> extends Error {
  constructor(readonly value: T) {
    super("rollback");
  }
}

/**
 * Runs `work` in one transaction on its own client: COMMIT when it returns, ROLLBACK when it throws.
 * This is the only place in Quire that issues BEGIN, so every mutation is whole or absent.
 * Throwing `new Rollback(v)` rolls back and returns `v`, for dry runs that must change nothing.
 */
export async function withTx<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
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
