import pg from "pg";
import { clientConfig, type DatabaseTarget } from "./target.ts";

/** Anything that runs a query: what a function that only reads takes (the pool, a client, a `Tx`). */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

// bigint columns (sequences) come back as JS numbers: sequences stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

declare const rowType: unique symbol;

/** A statement's config that carries the type of its rows (a type only: nothing is added at run time). */
export interface TypedQuery<Row> extends pg.QueryConfig {
  readonly [rowType]?: Row;
}

/**
 * A statement PostgreSQL parses and plans once per connection (a named prepared statement), for
 * the hot paths: a commit runs about ten statements, and planning each one every time cost more
 * CPU than executing it. `Row` is the shape of its result rows, which `firstRowOf` returns typed:
 * `firstRowOf(tx, repo_next_sequence([repoId]))`.
 */
export function prepared<Row = unknown>(name: string, text: string) {
  return (values: unknown[]): TypedQuery<Row> => ({ name, text, values });
}

/** The first row of a typed statement, or undefined when it returned none. */
export async function firstRowOf<Row>(db: Queryable, query: TypedQuery<Row>): Promise<Row | undefined> {
  return (await db.query(query)).rows[0];
}

/** A pool for `target`, sized for a serverless instance that serves a few requests at once. */
export function createPool(target: DatabaseTarget, max = 10): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(target), max, idleTimeoutMillis: 30_000 });
  // A client losing its server (restart, failover, shutdown) must not crash the process: an idle
  // one is dropped by the pool, a busy one fails its query, which answers 503 (isDatabaseUnavailable).
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/** Messages of errors node-postgres and pg-pool make themselves when a connection is lost or cannot be had. */
const CONNECTION_LOST = [
  /^Connection terminated/, // "… unexpectedly", "… due to connection timeout", plain (ended mid-query)
  /^Client has encountered a connection error and is not queryable/, // a query on a client whose socket died
  /^Client was closed and is not queryable/,
  /^timeout exceeded when trying to connect/, // pg-pool: no client within connectionTimeoutMillis
  /^Cannot use a pool after calling end on the pool/, // shutting down
  /^timeout expired/, // the connect timeout destroying the socket
  /^Query read timeout/,
];

/** Socket errors: the server went away, refused, or cannot be reached. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * PostgreSQL's: admin shutdown, crash shutdown, cannot connect now, database dropped, idle session
 * timeout, too many connections, out of memory or disk at connect; class 08 is added below.
 */
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "57P04", "57P05", "53300", "53100", "53200"]);

/**
 * True for errors that mean "the database is not there right now" rather than "the query is
 * wrong": refused, dropped or timed-out connections (pg's own messages for them, socket errors,
 * SQLSTATE class 08), the server shutting down or starting up, no free connection slots, and any
 * error PostgreSQL reports with severity FATAL (which ends the session). An error whose `cause`, or
 * an AggregateError one of whose `errors`, is one of these counts too. The dispatcher answers all
 * of them with 503 so clients retry.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== "object" || depth > 5) return false;
  const e = err as {
    code?: unknown;
    severity?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (e.severity === "FATAL") return true;
  if (typeof e.message === "string" && CONNECTION_LOST.some((re) => re.test(e.message as string)))
    return true;
  if (
    typeof e.code === "string" &&
    (SOCKET_CODES.has(e.code) || SQLSTATES.has(e.code) || e.code.startsWith("08"))
  )
    return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1)))
    return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}
