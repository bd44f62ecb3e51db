import { beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../../functions/server.ts";
import { cronOnce } from "../../../shared/ci/scheduler/timers.ts";
import { commit, createBranch, repoWithOwner, useFixture } from "../../support/world.ts";
import { ciYaml, startCiApp } from "../support.ts";
import { jobsOf, settle, startSecondInstance } from "./scheduler-support.ts";

/**
 * The cron runner (SPEC "CI trigger mapping", `on.schedule`): at a minute that matches one of
 * main's `on.schedule[].cron` expressions (UTC), one `schedule` job on main at its head; nothing
 * at other minutes; one job however many runners look at the same minute. Time is the app's
 * ManualClock; the runner's pass is called directly, as the timer or the Cloud Scheduler
 * function would.
 */

let head: number;
/** A minute on a 5-minute boundary, ahead of the clock, so the clock only moves forward. */
let boundary: number;

const MINUTE = 60_000;
const EVERY_FIVE = 'on:\n  schedule:\n    - cron: "*/5 * * * *"\n';

const app = useFixture(startCiApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["nightly/check"], EVERY_FIVE) });
  head = await commit(fx, "main", { "a.md": "a\n" });
  // A branch whose own file would fire every minute: schedules read main's file only.
  await createBranch(fx, "feature");
  await commit(fx, "feature", {
    ".svc/ci.yaml": ciYaml(["feature/check"], 'on:\n  schedule:\n    - cron: "* * * * *"\n'),
  });
  await settle(app, fx.repo);
  const now = app.clock.now().getTime();
  boundary = (Math.floor(now / (5 * MINUTE)) + 1) * 5 * MINUTE;
});

const scheduleJobs = async () => (await jobsOf(app, fx.repo)).filter((j) => j.trigger_type === "schedule");

describe("scheduled runs", () => {
  it("nothing is queued by the file's commits themselves (on has only schedule)", async () => {
    expect(await jobsOf(app, fx.repo)).toEqual([]);
  });

  it("a */5 schedule queues one schedule job on main at its head at a matching minute", async () => {
    app.clock.set(new Date(boundary + 30_000));
    const ids = await cronOnce(app.server.ctx);
    const jobs = await scheduleJobs();
    expect(jobs).toEqual([
      expect.objectContaining({
        trigger_type: "schedule",
        trigger_branch: "main",
        trigger_base_branch: null,
        trigger_proposal_id: null,
        sequence: head,
        status: "queued",
        checks: ["nightly/check"],
        created_by: "ci-scheduler",
      }),
    ]);
    expect(ids).toContain(jobs[0]!.id);
    const run = await fx.client.get(`/run/${jobs[0]!.id}`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ trigger_type: "schedule", branch: "main", sequence: head });
  });

  it("a non-matching minute queues nothing (and feature's every-minute schedule is not read)", async () => {
    const before = await jobsOf(app, fx.repo);
    for (const offset of [1, 2, 4]) {
      app.clock.set(new Date(boundary + offset * MINUTE + 5_000));
      expect(await cronOnce(app.server.ctx)).toEqual([]);
    }
    expect(await jobsOf(app, fx.repo)).toEqual(before);
  });

  it("two runners in the same minute queue one job; the next matching minute queues another at the new head", async () => {
    const newHead = await commit(fx, "main", { "b.md": "b\n" });
    await settle(app, fx.repo);
    const before = await scheduleJobs();
    const at = boundary + 5 * MINUTE;
    app.clock.set(new Date(at + 1_000));
    let second: RunningServer | undefined;
    try {
      second = await startSecondInstance(app, { RUNNER_URL: app.url }, app.clock);
      const [one, two, again] = await Promise.all([
        cronOnce(app.server.ctx),
        cronOnce(second.ctx),
        cronOnce(app.server.ctx),
      ]);
      app.clock.set(new Date(at + 59_000));
      const late = await cronOnce(second.ctx);
      const after = await scheduleJobs();
      const added = after.filter((j) => !before.some((b) => b.id === j.id));
      expect(added).toEqual([expect.objectContaining({ trigger_type: "schedule", sequence: newHead })]);
      // Exactly one of the passes queued it; the others found it already queued.
      expect([...one, ...two, ...again, ...late]).toEqual([added[0]!.id]);
    } finally {
      await second?.close();
    }
  });
});
