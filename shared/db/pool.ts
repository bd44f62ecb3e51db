import pg from "pg";

/** Anything that runs a query: the pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

// bigint columns (sequences) come back as JS numbers: sequences stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * A statement PostgreSQL parses and plans once per connection (a named prepared statement), for
 * the hot paths: a commit runs about ten statements, and planning each one every time cost more
 * CPU than executing it. `tx.query(commit_insert([...values]))`.
 */
export function prepared(name: string, text: string) {
  return (values: unknown[]): pg.QueryConfig => ({ name, text, values });
}

/** A pool for `connectionString`, sized for a serverless instance that serves a few requests at once. */
export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000 });
  // A client losing its server (restart, failover, shutdown) must not crash the process: an idle
  // one is dropped by the pool, a busy one fails its query, which answers 503 (isDatabaseUnavailable).
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/**
 * True for errors that mean "the database is not there right now" rather than "the query is
 * wrong": refused or dropped connections, the server shutting down or starting up, no free
 * connection slots, a database not accepting connections. PostgreSQL reports every error that
 * ends the session with severity FATAL. The dispatcher answers these with 503 so clients retry.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown; message?: unknown } | null;
  if (e?.severity === "FATAL") return true;
  if (typeof e?.message === "string" && /^Connection terminated/.test(e.message)) return true;
  const code = e?.code;
  if (typeof code !== "string") return false;
  return (
    ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "57P01", "57P02", "57P03", "53300"].includes(code) ||
    code.startsWith("08")
  );
}
