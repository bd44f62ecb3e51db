import type pg from "pg";
import { markKeyApplied } from "../idempotency/scope.ts";
import { beginGuarded, outsideRepo } from "../repos/guard.ts";

/** Thrown inside `withTx` to roll back on purpose and hand `value` back to the caller (a dry run). */
export class Rollback<T> extends Error {
  readonly value: T;
  constructor(value: T) {
    super("rollback");
    this.value = value;
  }
}

/** Work for after COMMIT, outside the transaction, given the pool the transaction ran on. */
export type CommitHook = (pool: pg.Pool) => void;

/**
 * One transaction in progress: what a function that must run inside a transaction takes (it
 * writes more than one statement, records events, or takes locks held until COMMIT). Only
 * `withTx` makes one: the private field makes the type nominal, so a `pg.Pool` or a bare client
 * (whose statements would each commit on their own) is refused where a `Tx` is required. A `Tx`
 * is a `Queryable`, so it also goes to every function that only reads.
 */
class Transaction {
  /** Runs a statement on the transaction's client. */
  readonly query: pg.PoolClient["query"];
  readonly #hooks = new Set<CommitHook>();

  constructor(client: pg.PoolClient) {
    this.query = client.query.bind(client);
  }

  /**
   * Runs `hook` once this transaction has committed (a hook registered twice runs once). A
   * transaction that rolls back, or is run again after a deadlock, drops the hooks it registered.
   * Hooks run after the client is released and must not throw: the transaction stands.
   */
  afterCommit(hook: CommitHook): void {
    this.#hooks.add(hook);
  }

  /** Runs the hooks of a committed transaction. */
  static committed(tx: Transaction, pool: pg.Pool): void {
    outsideRepo(() => {
      for (const hook of tx.#hooks) hook(pool);
    });
  }
}

export type Tx = Transaction;

/** Deadlock detected, serialization failure: the transaction lost a race and may simply run again. */
const RETRYABLE = new Set(["40P01", "40001"]);
const ATTEMPTS = 3;

/**
 * Runs `work` in one transaction on its own client: COMMIT when it returns, ROLLBACK when it throws.
 * This is the only place in Quire that issues BEGIN, so every mutation is whole or absent.
 * Throwing `new Rollback(v)` rolls back and returns `v`, for dry runs that must change nothing.
 * A transaction that PostgreSQL aborted as a deadlock victim is run again (up to 3 times) with a
 * fresh `Tx`, so `work` must not have effects outside the transaction that a second run would
 * repeat wrongly: such effects belong in `tx.afterCommit`, which runs for the committed attempt only.
 */
export async function withTx<T>(
  pool: pg.Pool,
  work: (tx: Tx) => Promise<T>,
  opts: TxOptions = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(pool, work, opts);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= ATTEMPTS || code === undefined || !RETRYABLE.has(code)) throw err;
    }
  }
}

/**
 * `readOnlySnapshot`: a read-only transaction that sees one snapshot throughout (REPEATABLE READ),
 * for a report that reads many tables and must be consistent. Set at BEGIN, since it must come
 * before any statement, the repo guard's included.
 */
export interface TxOptions {
  readOnlySnapshot?: boolean;
}

async function once<T>(pool: pg.Pool, work: (tx: Tx) => Promise<T>, opts: TxOptions): Promise<T> {
  const client = await pool.connect();
  const tx = new Transaction(client);
  let broken = false;
  let result: T;
  try {
    // In a repo request, with the repo's lock before any row lock (repos/guard.ts).
    await beginGuarded(
      client,
      opts.readOnlySnapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN",
    );
    result = await work(tx);
    await markKeyApplied(tx); // a request's Idempotency-Key: done with this COMMIT, or not at all
    await client.query("COMMIT");
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
  Transaction.committed(tx, pool);
  return result;
}
