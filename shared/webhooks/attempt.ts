import type pg from "pg";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { type LeasedRow, type Recorded, recordOutcome } from "./outbox.ts";
import { type AttemptOutcome, envelopeBody, type SendOptions, sendWebhook } from "./send.ts";

/** What an attempt needs, whichever deliverer (local worker or Cloud Tasks function) makes it. */
export interface AttemptDeps {
  /**
   * The deliverers' own pool, with synchronous_commit off: losing the last recorded outcomes in
   * a database crash only means those rows are sent again, with the same event id, which
   * at-least-once delivery allows; waiting for a WAL flush per delivery would halve throughput.
   */
  pool: pg.Pool;
  clock: Clock;
  log: Logger;
  send: SendOptions;
  /** The global admins (lower case): a global subscription's creator must still be one. */
  admins: string[];
}

/**
 * Sends one leased row (outside any transaction: a receiver may take up to the timeout). Both
 * deliverers send through here. `signal` abandons the send (the deliverer is stopping).
 */
export async function sendRow(
  deps: AttemptDeps,
  row: LeasedRow,
  signal?: AbortSignal,
): Promise<AttemptOutcome> {
  const outcome = await sendWebhook({ url: row.url, secret: row.secret }, envelopeBody(row.event), {
    ...deps.send,
    allowPrivate: deps.send.allowPrivate || row.trusted,
    signal,
  });
  const fields = {
    outbox_id: row.id,
    subscription_id: row.subscriptionId,
    event_id: row.event.id,
    attempt: row.attempt,
    status: outcome.status,
  };
  if (outcome.ok) deps.log.debug(fields, "webhook delivered");
  else if (!signal?.aborted) deps.log.info({ ...fields, error: outcome.error }, "webhook attempt failed");
  return outcome;
}

/** Records one attempt's outcome under its lease, and says what happened. */
export async function recordRow(
  deps: AttemptDeps,
  row: LeasedRow,
  outcome: AttemptOutcome,
): Promise<Recorded> {
  const recorded = await recordOutcome(deps.pool, row, outcome, deps.clock.now());
  if (!recorded.recorded)
    deps.log.warn(
      { outbox_id: row.id, attempt: row.attempt },
      "webhook lease lost before the outcome was recorded; another deliverer has the row",
    );
  if (recorded.suspended)
    deps.log.warn(
      { subscription_id: row.subscriptionId },
      "webhook subscription suspended after 10 failed attempts",
    );
  return recorded;
}

/** One attempt of one leased row, sent and recorded: what a Cloud Tasks task does. */
export async function attemptRow(
  deps: AttemptDeps,
  row: LeasedRow,
): Promise<{ outcome: AttemptOutcome; recorded: Recorded }> {
  const outcome = await sendRow(deps, row);
  return { outcome, recorded: await recordRow(deps, row, outcome) };
}
