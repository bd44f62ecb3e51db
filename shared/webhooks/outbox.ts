import type { Queryable } from "../db/pool.ts";
import type { Logger } from "../log.ts";
import {
  outbox_claim_for_task,
  outbox_delete_delivered,
  outbox_lease_due,
  outbox_reserve_for_tasks,
  outbox_select_next_due,
  outbox_update_delivered,
  outbox_update_failed,
  outbox_update_released,
  outbox_update_unreserved,
} from "./queries.ts";
import type { AttemptOutcome, EventRow } from "./send.ts";

/** A row is tried at most 10 times; the 10th failure suspends its subscription. */
export const MAX_ATTEMPTS = 10;
/** Backoff doubles from 1 s and stops growing at 1 hour. */
export const MAX_BACKOFF_SECONDS = 3600;
/** Delivered rows are kept this long, then deleted. */
export const RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Seconds to wait after the `attempt`-th failed attempt of a row: 1, 2, 4, 8, ... capped at 3600. */
export function backoffSeconds(attempt: number): number {
  return Math.min(2 ** Math.max(attempt - 1, 0), MAX_BACKOFF_SECONDS);
}

/** An outbox row leased for one attempt, with what sending it needs. */
export interface LeasedRow {
  id: number;
  subscriptionId: string;
  /** What is sent one row at a time: the subscription, or a lane of a system subscription. */
  lane: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** The lease under which the outcome may be recorded. */
  lease: number;
  url: string;
  secret: string | null;
  /**
   * A system subscription: its URL is the operator's (RUNNER_URL), so it may be a private or
   * loopback address, which user-made subscriptions may not reach.
   */
  trusted: boolean;
  event: EventRow;
}

function toLeased(r: Record<string, unknown>): LeasedRow {
  return {
    id: Number(r["id"]),
    subscriptionId: r["subscription_id"] as string,
    lane: r["lane"] as string,
    attempt: Number(r["attempts"]),
    lease: Number(r["lease_seq"]),
    url: r["url"] as string,
    secret: (r["secret"] as string | null) ?? null,
    trusted: r["trusted"] === true,
    event: {
      id: r["event_id"] as string,
      type: r["type"] as string,
      source: r["source"] as string,
      time: r["time"] as Date,
      data: r["data"] as Record<string, unknown>,
    },
  };
}

const byId = (a: LeasedRow, b: LeasedRow) => a.id - b.id;

/** Leases due rows for a local worker (see `outbox_lease_due`), in event order. */
export async function leaseDue(
  db: Queryable,
  input: {
    now: Date;
    batch: number;
    perSubscription: number;
    leaseSeconds: number;
    busy: string[];
    /** The global admins (lower case), for the creators' access check. */
    admins: string[];
  },
): Promise<LeasedRow[]> {
  const { rows } = await db.query(outbox_lease_due, [
    input.now,
    input.batch,
    input.busy,
    input.leaseSeconds,
    input.perSubscription,
    input.admins,
  ]);
  return rows.map(toLeased).sort(byId);
}

/** What recording an attempt did. */
export interface Recorded {
  /** False when the lease was no longer current (another deliverer took the row over). */
  recorded: boolean;
  /** True when this failure suspended the subscription. */
  suspended: boolean;
  /** After a recorded failure that did not suspend: when the row is due again. */
  retryAt?: Date;
}

/** A successful attempt, waiting to be recorded with others. */
export interface Delivery {
  row: LeasedRow;
  status: number;
  at: Date;
}

/** Records successful attempts, each under its lease, in one statement; returns how many counted. */
export async function recordDelivered(db: Queryable, deliveries: Delivery[]): Promise<number> {
  if (deliveries.length === 0) return 0;
  const res = await db.query(outbox_update_delivered, [
    deliveries.map((d) => d.row.id),
    deliveries.map((d) => d.row.lease),
    deliveries.map((d) => d.at),
    deliveries.map((d) => d.status),
  ]);
  return res.rowCount ?? 0;
}

/**
 * Records the outcome of one attempt under its lease: delivered, or due again after the backoff;
 * a failure of the 10th (or a later) attempt also suspends the subscription, in the same statement.
 */
export async function recordOutcome(
  db: Queryable,
  row: LeasedRow,
  outcome: AttemptOutcome,
  now: Date,
): Promise<Recorded> {
  if (outcome.ok) {
    const n = await recordDelivered(db, [{ row, status: outcome.status ?? 200, at: now }]);
    return { recorded: n === 1, suspended: false };
  }
  const next = new Date(now.getTime() + backoffSeconds(row.attempt) * 1000);
  const { rows } = await db.query(outbox_update_failed, [
    row.id,
    row.lease,
    now,
    next,
    outcome.status,
    (outcome.error ?? "").slice(0, 1000),
    MAX_ATTEMPTS,
  ]);
  const recorded = rows[0].recorded === 1;
  const suspended = rows[0].suspended === 1;
  return recorded && !suspended ? { recorded, suspended, retryAt: next } : { recorded, suspended };
}

/**
 * The earliest time after `now` at which an undelivered row of an active subscription falls due,
 * or null: when a local worker should wake next for a retry (see `PostgresWebhookWorker`).
 */
export async function nextDueAfter(db: Queryable, now: Date): Promise<Date | null> {
  const { rows } = await db.query(outbox_select_next_due, [now]);
  return (rows[0]?.at as Date | null) ?? null;
}

/** Hands leased rows back unsent; their attempts are not counted. */
export async function releaseLeases(db: Queryable, rows: LeasedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(outbox_update_released, [rows.map((r) => r.id), rows.map((r) => r.lease)]);
}

/**
 * Runs a deliverer's `cleanup` every `ms` without keeping the process alive; a failure is logged
 * and the next round tries again.
 */
export function cleanupEvery(ms: number, cleanup: () => Promise<unknown>, log: Logger): NodeJS.Timeout {
  const timer = setInterval(() => {
    cleanup().catch((err) => log.warn({ err }, "webhook outbox cleanup failed"));
  }, ms);
  timer.unref();
  return timer;
}

/** Deletes rows delivered more than 7 days before `now`, in batches; returns how many. */
export async function deleteDelivered(db: Queryable, now: Date, batch = 1000): Promise<number> {
  const cutoff = new Date(now.getTime() - RETENTION_MS);
  let total = 0;
  for (;;) {
    const res = await db.query(outbox_delete_delivered, [cutoff, batch]);
    total += res.rowCount ?? 0;
    if ((res.rowCount ?? 0) < batch) return total;
  }
}

/** A row reserved for one Cloud Tasks task. */
export interface Reservation {
  id: number;
  lease: number;
  scheduleAt: Date;
  /** The subscription's system name (null for a person's) and URL. */
  system: string | null;
  url: string;
}

/** Cloud Tasks mode: reserves rows without a task (or one row, `only`) for one task each. */
export async function reserveForTasks(
  db: Queryable,
  input: { now: Date; batch: number; graceSeconds: number; only?: number },
): Promise<Reservation[]> {
  const { rows } = await db.query(outbox_reserve_for_tasks, [
    input.now,
    input.batch,
    input.only ?? null,
    input.graceSeconds,
  ]);
  return rows
    .map((r) => ({
      id: Number(r.id),
      lease: Number(r.lease_seq),
      scheduleAt: r.schedule_at as Date,
      system: (r.system_name as string | null) ?? null,
      url: r.url as string,
    }))
    .sort((a, b) => a.id - b.id);
}

/**
 * Cloud Tasks mode: the task for `lease` of row `id` claims its attempt, or finds it stale (null).
 * `handles`: the system subscription whose rows the caller handles itself; null, a webhook sender,
 * which never claims a row of `handledElsewhere`.
 */
export async function claimForTask(
  db: Queryable,
  input: {
    id: number;
    lease: number;
    now: Date;
    leaseSeconds: number;
    admins: string[];
    handles: string | null;
    handledElsewhere: readonly string[];
  },
): Promise<LeasedRow | null> {
  const { rows } = await db.query(outbox_claim_for_task, [
    input.id,
    input.lease,
    input.now,
    input.leaseSeconds,
    input.admins,
    input.handles,
    input.handledElsewhere,
  ]);
  return rows[0] ? toLeased(rows[0]) : null;
}

/** Cloud Tasks mode: hands back a reservation whose task could not be created. */
export async function unreserve(db: Queryable, r: Reservation): Promise<void> {
  await db.query(outbox_update_unreserved, [r.id, r.lease]);
}
