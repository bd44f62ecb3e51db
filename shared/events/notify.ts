import type pg from "pg";
import type { CommitHook } from "../db/tx.ts";

/** The channel on which a committed transaction that recorded events wakes the deliverers. */
export const EVENTS_CHANNEL = "quire_events";

/**
 * What a process runs right after each commit that recorded events on a pool, besides the NOTIFY:
 * a function instance, which runs no deliverer of its own, creates the commit's webhook tasks
 * (shared/webhooks/delivery.ts). Called synchronously by the commit's hook, so the request that
 * committed can still wait for the work before it answers.
 */
const commitListeners = new WeakMap<pg.Pool, Set<() => void>>();

/** Runs `listener` after every commit on `pool` that recorded events; returns the unsubscribe. */
export function onEventsCommitted(pool: pg.Pool, listener: () => void): () => void {
  let listeners = commitListeners.get(pool);
  if (!listeners) {
    listeners = new Set();
    commitListeners.set(pool, listeners);
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Pools with a wake-up already on its way: the commits that land meanwhile share it. */
const wakePending = new WeakSet<pg.Pool>();
const WAKE_COALESCE_MS = 2;

/**
 * The after-commit hook of a transaction that recorded events (`tx.afterCommit(wakeDeliverers)`):
 * wakes the deliverers off the request's path, one NOTIFY per pool at most every few milliseconds,
 * however many commits land meanwhile. Sent outside the transaction on purpose: NOTIFY inside it
 * would serialize every committing mutation on PostgreSQL's notify lock. A lost wake-up only
 * delays delivery until the deliverers' next sweep: they read the log, not the message.
 */
export const wakeDeliverers: CommitHook = (pool) => {
  for (const listener of commitListeners.get(pool) ?? []) listener();
  if (wakePending.has(pool)) return;
  wakePending.add(pool);
  setTimeout(() => {
    wakePending.delete(pool);
    pool.query("SELECT pg_notify($1, '')", [EVENTS_CHANNEL]).catch(() => {
      // the commits stand; the sweep delivers
    });
  }, WAKE_COALESCE_MS).unref();
};
