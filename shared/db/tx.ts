import type pg from "pg";

/** Thrown inside `withTx` to roll back on purpose and hand `value` back to the caller (a dry run). */
export class Rollback<T> extends Error {
  constructor(readonly value: T) {
    super("rollback");
  }
}

/** The channel on which a committed transaction that recorded events wakes the deliverers. */
export const EVENTS_CHANNEL = "quire_events";

// Transactions (by their client) that recorded events: after COMMIT they send one NOTIFY.
const recordedEvents = new WeakSet<object>();

/** Called by recordEvent: this transaction's commit must wake the deliverers. */
export function markEventsRecorded(tx: object): void {
  recordedEvents.add(tx);
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
    if (recordedEvents.delete(client)) wakeSoon(pool);
    return result;
  } catch (err) {
    recordedEvents.delete(client);
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

/** Pools with a wake-up already on its way: the commits that land meanwhile share it. */
const wakePending = new WeakSet<pg.Pool>();
const WAKE_COALESCE_MS = 2;

/**
 * Wakes the deliverers after a commit, off the request's path: one NOTIFY per pool at most every
 * few milliseconds, however many commits land meanwhile. Sent outside the transaction on purpose:
 * NOTIFY inside it would serialize every committing mutation on PostgreSQL's notify lock. A lost
 * wake-up only delays delivery until the deliverers' next sweep: they read the log, not the message.
 */
function wakeSoon(pool: pg.Pool): void {
  if (wakePending.has(pool)) return;
  wakePending.add(pool);
  setTimeout(() => {
    wakePending.delete(pool);
    pool.query("SELECT pg_notify($1, '')", [EVENTS_CHANNEL]).catch(() => {
      // the commits stand; the sweep delivers
    });
  }, WAKE_COALESCE_MS).unref();
}
