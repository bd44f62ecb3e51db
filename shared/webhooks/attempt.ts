import type pg from "pg";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { type LeasedRow, type Recorded, recordOutcome } from "./outbox.ts";
import { type AttemptOutcome, envelopeBody, type SendOptions, sendWebhook } from "./send.ts";

/** What an attempt needs, whichever deliverer (local worker or Cloud Tasks function) makes it. */
export interface AttemptDeps {
  pool: pg.Pool;
  clock: Clock;
  log: Logger;
  send: SendOptions;
}

/**
 * One attempt of one leased row: send (outside any transaction: a receiver may take up to the
 * timeout) and record the outcome under the row's lease. Both deliverers run exactly this, so the
 * local queue and Cloud Tasks behave alike. `signal` aborts the send without recording anything
 * (the caller hands the row back).
 */
export async function attemptRow(
  deps: AttemptDeps,
  row: LeasedRow,
  signal?: AbortSignal,
): Promise<{ outcome: AttemptOutcome; recorded: Recorded } | { aborted: true }> {
  const body = envelopeBody(row.event);
  const outcome = await sendWebhook({ url: row.url, secret: row.secret }, body, { ...deps.send, signal });
  if (signal?.aborted) return { aborted: true };
  const recorded = await recordOutcome(deps.pool, row, outcome, deps.clock.now());
  const fields = {
    outbox_id: row.id,
    subscription_id: row.subscriptionId,
    event_id: row.event.id,
    attempt: row.attempt,
    status: outcome.status,
  };
  if (outcome.ok) deps.log.debug(fields, "webhook delivered");
  else deps.log.info({ ...fields, error: outcome.error }, "webhook attempt failed");
  if (!recorded.recorded)
    deps.log.warn(
      fields,
      "webhook lease lost before the outcome was recorded; another deliverer has the row",
    );
  if (recorded.suspended)
    deps.log.warn(
      { subscription_id: row.subscriptionId },
      "webhook subscription suspended after 10 failed attempts",
    );
  return { outcome, recorded };
}
