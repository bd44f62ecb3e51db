import type { AppContext } from "../context.ts";
import type { LeasedRow } from "../webhooks/outbox.ts";
import type { AttemptOutcome } from "../webhooks/send.ts";
import { AUTO_MERGE_SYSTEM, deleteSystemSubscription, upsertSystemSubscription } from "../webhooks/system.ts";
import { attemptAutoMerge } from "./auto-merge.ts";
import { AUTO_MERGE_TRIGGERS, branchesToAttempt } from "./auto-merge-relay.ts";

/**
 * Auto-merge in the deployed form (docs/auto-merge.md, "Where it runs"): a system subscription to
 * the trigger events, whose outbox rows Cloud Tasks hands, one task per attempt, to the internal
 * `autoMerge` function, which attempts the event's branches there. The outbox makes it survive
 * restarts and run once per event whatever the number of instances; the attempt's own guards make
 * a second delivery of an event merge nothing more.
 */

/**
 * Tries per row before an attempt that keeps failing unexpectedly (the blob store or `opa` down)
 * is given up, as the local relay gives it up at once: so a bad branch never suspends the
 * subscription (10 failures would), which would stop every other branch's auto-merge.
 */
export const AUTO_MERGE_TRIES = 3;
/** One task's attempts may compile policies (opa) for several branches: its lease. */
const LEASE_SECONDS = 60;

/**
 * With SVC_AUTO_MERGE_TASKS_TARGET_URL set, makes sure the auto-merge subscription exists (the
 * trigger types, to that URL); unset, removes one a previous configuration left, so its rows are
 * not sent anywhere as webhooks. Returns whether anything changed.
 */
export async function registerAutoMergeSubscription(
  ctx: Pick<AppContext, "config" | "pool" | "clock">,
): Promise<boolean> {
  const url = ctx.config.SVC_AUTO_MERGE_TASKS_TARGET_URL;
  if (!url) return deleteSystemSubscription(ctx.pool, AUTO_MERGE_SYSTEM);
  return upsertSystemSubscription(ctx.pool, ctx.clock, {
    name: AUTO_MERGE_SYSTEM,
    eventTypes: AUTO_MERGE_TRIGGERS,
    url,
    secret: null,
  });
}

/**
 * The autoMerge function's work for one Cloud Tasks task: claims the outbox row under the task's
 * lease (a stale or repeated task does nothing), attempts every branch its event may have made
 * mergeable, and records the row delivered, or failed for a retry after the backoff.
 */
export function deliverAutoMergeTask(
  ctx: AppContext,
  task: { outbox_id: number; lease: number },
): Promise<"delivered" | "failed" | "stale"> {
  return ctx.webhooks.deliverTask(task, {
    system: AUTO_MERGE_SYSTEM,
    leaseSeconds: LEASE_SECONDS,
    pool: ctx.pool,
    handle: (row) => attemptForRow(ctx, row),
  });
}

/** Attempts each branch of the row's event; one branch's failure does not stop the others. */
async function attemptForRow(ctx: AppContext, row: LeasedRow): Promise<AttemptOutcome> {
  const done = { ok: true, status: 200, error: null } as const;
  const { type, data } = row.event;
  const repo = data["repo"];
  if (typeof repo !== "string") return done;
  const failed: string[] = [];
  for (const branch of await branchesToAttempt(ctx.pool, { repo, type, data })) {
    try {
      const outcome = await attemptAutoMerge(ctx, repo, branch);
      if (outcome === "merged" || outcome === "disabled")
        ctx.log.info({ repo, branch, outcome, event_id: row.event.id }, "auto-merge attempted");
    } catch (err) {
      ctx.log.warn({ repo, branch, err, attempt: row.attempt }, "auto-merge attempt failed");
      failed.push(branch);
    }
  }
  if (failed.length === 0) return done;
  if (row.attempt >= AUTO_MERGE_TRIES) {
    ctx.log.error(
      { repo, branches: failed, event_id: row.event.id },
      `auto-merge given up for this event after ${AUTO_MERGE_TRIES} tries; the branches are attempted again at their next event`,
    );
    return done;
  }
  // Attempting again is harmless for the branches that got through: an attempt is idempotent.
  return { ok: false, status: null, error: `auto-merge attempt failed for ${failed.join(", ")}` };
}
