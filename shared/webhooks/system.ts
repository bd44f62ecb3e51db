import { randomUUID } from "node:crypto";
import type { Clock } from "../clock.ts";
import type { Queryable } from "../db/pool.ts";
import { system_subscription_delete, system_subscription_upsert } from "./queries.ts";

/**
 * System subscriptions: registered by Quire itself from its configuration (`system_name`), not by a
 * person. Their rows go through the outbox like any webhook's (at least once, retried, SKIP LOCKED).
 */

/** The auto-merge subscription (docs/auto-merge.md): its events are attempted, not sent. */
export const AUTO_MERGE_SYSTEM = "auto-merge";

/**
 * The system subscriptions whose events are handled by a function of their own rather than sent as
 * webhooks: with Cloud Tasks, a row's task goes straight to the subscription's URL (that function's
 * internal route, with the tasks' OIDC token), and the webhook sender never claims their rows.
 */
export const TASK_HANDLED_SYSTEMS: ReadonlySet<string> = new Set([AUTO_MERGE_SYSTEM]);

/**
 * Makes sure the system subscription `name` exists as given, once whatever the number of instances
 * starting; a changed URL, secret or type list updates it in place. Returns whether anything changed.
 */
export async function upsertSystemSubscription(
  db: Queryable,
  clock: Clock,
  sub: { name: string; eventTypes: readonly string[]; url: string; secret: string | null },
): Promise<boolean> {
  const { rowCount } = await db.query(system_subscription_upsert, [
    randomUUID(),
    sub.eventTypes,
    sub.url,
    sub.secret,
    clock.now(),
    sub.name,
  ]);
  return rowCount === 1;
}

/** Removes the system subscription `name`, and its undelivered rows; returns whether one existed. */
export async function deleteSystemSubscription(db: Queryable, name: string): Promise<boolean> {
  const { rowCount } = await db.query(system_subscription_delete, [name]);
  return (rowCount ?? 0) > 0;
}
