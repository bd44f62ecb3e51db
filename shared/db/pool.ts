import pg from "pg";

/** Anything that runs a query: the pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

// bigint columns (sequences) come back as JS numbers: sequences stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/** A pool for `connectionString`, sized for a serverless instance that serves a few requests at once. */
export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000 });
  // An idle client losing its server (restart, failover) must not crash the process.
  pool.on("error", () => {});
  return pool;
}
