import { cronResponse, reapResponse } from "../../shared/api/ci.ts";
import { REAP_EVERY_MS } from "../../shared/ci/jobs/queue.ts";
import { cronOnce, reapOnce } from "../../shared/ci/scheduler/timers.ts";
import { ok, route } from "../../shared/http/route.ts";

/**
 * The CI cron runner and reaper as functions for Cloud Scheduler (docs/ci-scheduler.md), each its
 * own private function that only the scheduler's service account may invoke; not mounted on the
 * local server, which runs them as timers. Cloud Scheduler fires at most once a minute, so one
 * reaper call reaps, waits 30 seconds and reaps again: a reap every 30 seconds, as the spec asks.
 */
export const ciCronRoutes = [
  route({
    method: "POST",
    path: "/ci-cron",
    access: "internal",
    summary: "Queues the schedule jobs of the current minute (called by Cloud Scheduler every minute)",
    responses: { 200: cronResponse },
    handler: async ({ ctx }) => ok({ jobs: await cronOnce(ctx) }),
  }),
];

export const ciReaperRoutes = [
  route({
    method: "POST",
    path: "/ci-reap",
    access: "internal",
    summary:
      "Re-queues claimed jobs with no heartbeat for 2 minutes, twice 30 seconds apart (called by Cloud Scheduler every minute)",
    responses: { 200: reapResponse },
    handler: async ({ ctx }) => {
      const first = await reapOnce(ctx);
      await ctx.clock.sleep(REAP_EVERY_MS);
      const second = await reapOnce(ctx);
      return ok({
        requeued: [...first.requeued, ...second.requeued],
        failed: [...first.failed, ...second.failed],
      });
    },
  }),
];
