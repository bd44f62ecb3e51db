import { AsyncLocalStorage } from "node:async_hooks";
import type { Queryable } from "../db/pool.ts";
import { DomainError } from "../errors.ts";

/**
 * The `Idempotency-Key` a request holds while its handler runs (docs/api.md "Safe retries"). It
 * travels with the handler's async context, so the handler's own transactions can mark the key
 * `applied` without any handler knowing about keys.
 */
export interface HeldKey {
  identity: string;
  key: string;
  /** This attempt's hold on the row: a retry that retakes a stale row replaces it. */
  lease: string;
  /** False once the handler has returned: work started later (timers) is not the request's. */
  open: boolean;
  /** Set when one of the handler's transactions committed with the mark. */
  applied: boolean;
}

const held = new AsyncLocalStorage<HeldKey>();

/** Runs `work` holding `key`; the key is closed when `work` settles. */
export async function runHolding<T>(key: HeldKey, work: () => Promise<T>): Promise<T> {
  try {
    return await held.run(key, work);
  } finally {
    key.open = false;
  }
}

/**
 * The key the current request holds, if any: for work another request's transaction does on this
 * one's behalf (a group commit's leader), which marks it with `markKeyApplied(tx, key)`.
 */
export function heldKey(): HeldKey | undefined {
  return held.getStore();
}

const mark_applied = `
  UPDATE idempotency_keys SET state = 'applied'
  WHERE identity = $1 AND key = $2 AND lease = $3 AND state IN ('in_progress', 'applied')`;

/**
 * Called by withTx just before COMMIT: inside the mutation's own transaction, records that the
 * work of the held key is done, so a crash after the COMMIT cannot leave a done mutation that a
 * retry would do again. If another request retook the key meanwhile (this one ran past the stale
 * limit), the mark fails and the transaction rolls back: the work is done once, by the holder.
 * Outside a request that holds a key this does nothing and costs nothing. `key` is the current
 * request's unless given.
 */
export async function markKeyApplied(tx: Queryable, key: HeldKey | undefined = heldKey()): Promise<void> {
  if (!key?.open) return;
  const { rowCount } = await tx.query(mark_applied, [key.identity, key.key, key.lease]);
  if (!rowCount)
    throw new DomainError(
      "IDEMPOTENCY_IN_PROGRESS",
      "another request with this Idempotency-Key took it over; this one changed nothing",
    );
  key.applied = true;
}
