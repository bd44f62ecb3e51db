import type { AppContext } from "../../context.ts";
import { REAP_EVERY_MS, reapStale } from "../jobs/queue.ts";
import { runSchedules } from "./triggers.ts";

/** Re-queues stale claims once and logs what it did (the reaper's one pass). */
export async function reapOnce(ctx: AppContext): Promise<{ requeued: string[]; failed: string[] }> {
  const reaped = await reapStale(ctx.pool, ctx.clock.now());
  if (reaped.requeued.length > 0 || reaped.failed.length > 0)
    ctx.log.warn({ requeued: reaped.requeued, failed: reaped.failed }, "ci jobs without heartbeat reaped");
  return reaped;
}

/** The cron runner's one pass: the schedules of the minute `now` falls in. */
export async function cronOnce(ctx: AppContext): Promise<string[]> {
  const queued = await runSchedules(ctx, ctx.clock.now());
  if (queued.length > 0) ctx.log.info({ jobs: queued }, "scheduled ci jobs queued");
  return queued;
}

/**
 * Local mode's cron runner and reaper as timers in the process (in the cloud, Cloud Scheduler
 * calls functions instead): the reaper every 30 seconds, the cron runner a second into every
 * minute. Several processes may run them at once: both are idempotent (SKIP-free single
 * statements; schedule jobs keyed by repo and minute). Returns a stop function.
 */
export function startCiTimers(ctx: AppContext): () => void {
  const guard = (what: string, work: () => Promise<unknown>) => () => {
    work().catch((err) => ctx.log.error({ err }, `ci ${what} failed; it runs again at its next tick`));
  };
  const reaper = setInterval(
    guard("reaper", () => reapOnce(ctx)),
    REAP_EVERY_MS,
  );
  let cron: NodeJS.Timeout;
  const nextMinute = () => {
    const now = Date.now();
    cron = setTimeout(
      () => {
        guard("cron", () => cronOnce(ctx))();
        nextMinute();
      },
      60_000 - (now % 60_000) + 1000,
    );
    cron.unref();
  };
  reaper.unref();
  nextMinute();
  return () => {
    clearInterval(reaper);
    clearTimeout(cron);
  };
}
