import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { STALE_AFTER_MS } from "../../../shared/ci/jobs/queue.ts";
import { startCiTimers } from "../../../shared/ci/scheduler/timers.ts";
import { commit, repoWithOwner, useFixture } from "../../support/world.ts";
import { ciYaml, claimWithin, startCiApp, waitForCount } from "../support.ts";

/**
 * Local mode's timers (what `npm start` runs; the tests' apps run none): the reaper every 30
 * seconds and the cron runner a second into each minute, driven here by vitest's fake timers over
 * the real database.
 */
const app = useFixture(startCiApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  const on = "on:\n  push:\n    branches: [nope]\n  schedule:\n    - cron: '* * * * *'\n";
  await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"], on) });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the local CI timers", () => {
  it("reap a stale claim within 30 seconds and queue the schedule at the next minute", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    const stop = startCiTimers(app.server.ctx);
    try {
      // The minute's schedule job: the cron runner fires a second into the next minute.
      await vi.advanceTimersByTimeAsync(61_000);
      const schedule = `SELECT count(*)::int AS n FROM ci_jobs WHERE repo_id = $1 AND trigger_type = 'schedule'`;
      vi.useRealTimers();
      expect(await waitForCount(app, schedule, [fx.repoId], 1)).toBe(1);
      const claim = await claimWithin(app);
      expect(claim.body.trigger_type).toBe("schedule");

      // Its worker goes silent: 2 minutes later (the app's clock), the next reaper tick takes it back.
      app.clock.advance(STALE_AFTER_MS + 1000);
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
      const stop2 = startCiTimers(app.server.ctx);
      await vi.advanceTimersByTimeAsync(30_000);
      vi.useRealTimers();
      const requeued = `SELECT count(*)::int AS n FROM ci_jobs WHERE id = $1 AND status = 'queued'`;
      expect(await waitForCount(app, requeued, [claim.body.id], 1)).toBe(1);
      stop2();
    } finally {
      stop();
    }
  });
});
