import { readFile } from "node:fs/promises";
import path from "node:path";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { STALE_AFTER_MS } from "../../shared/ci/jobs/queue.ts";
import { reapOnce } from "../../shared/ci/scheduler/timers.ts";
import type { CheckInput, RunCheck } from "../../worker/check/types.ts";
import { storedJob } from "../ci/scheduler/scheduler-support.ts";
import { commit, createBranch, repoWithOwner, useFixture } from "../support/world.ts";
import { hostileArchives, tarGz } from "./archives.ts";
import { checkRunsAt, readLog, startWorkerApp, workerConfig, workOneJob } from "./support.ts";

/**
 * The worker's protocol, in this process against a real server over HTTP, with a scripted check
 * runner standing in for the sandbox (the end-to-end test, e2e.test.ts, runs the real one).
 */

const app = useFixture(() => startWorkerApp());
const fx = useFixture(() => repoWithOwner(app));

const CONFIG = `on:
  push:
    branches: ["feature*"]
checks:
  - name: unit/pass
    image: busybox
    steps: [exit 0]
  - name: unit/fail
    image: busybox
    steps: [exit 3]
  - name: unit/skipped
    image: busybox
    steps: [exit 0]
    if: event.type == 'schedule'
`;

/** A runner that passes `*pass` checks and fails the rest, recording what it was given. */
function scriptedRunner(seen: CheckInput[], files: Record<string, string> = {}): RunCheck {
  return async (input) => {
    seen.push(input);
    files[input.check.name] = await readFile(path.join(input.sourceDir, "notes/a.md"), "utf8").catch(
      () => "",
    );
    const pass = input.check.name.endsWith("pass");
    return {
      conclusion: pass ? "passed" : "failed",
      summary: pass ? "all steps passed" : "step 1 exited 3",
      log: Buffer.from(`$ ${input.check.steps.join(" && ")}\n${pass ? "ok" : "exit 3"}\n`),
    };
  };
}

describe("the worker's protocol", () => {
  it("claims a push job, runs the checks whose if: holds with the source and a JWT each, reports them and completes failed", async () => {
    await commit(fx, "main", { ".svc/ci.yaml": CONFIG }, "add CI");
    await createBranch(fx, "feature-1");
    const head = await commit(fx, "feature-1", { "notes/a.md": "# A\n" }, "notes");
    const seen: CheckInput[] = [];
    const files: Record<string, string> = {};
    const outcome = await workOneJob(workerConfig(app), scriptedRunner(seen, files));

    expect(outcome.status).toBe("failed");
    expect(outcome.error).toBe("1 of 2 checks failed: unit/fail (step 1 exited 3)");
    expect(seen.map((s) => s.check.name).sort()).toEqual(["unit/fail", "unit/pass"]);
    expect(files).toEqual({ "unit/pass": "# A\n", "unit/fail": "# A\n" });
    for (const input of seen) {
      expect(input.check).toEqual({
        name: input.check.name,
        image: "busybox",
        steps: [input.check.name.endsWith("pass") ? "exit 0" : "exit 3"],
      });
      expect(input.limits).toEqual({ timeoutMs: 30_000, logCapBytes: 1024 * 1024, network: "none" });
      expect(decodeJwt(input.jobToken)).toMatchObject({
        check_name: input.check.name,
        repo: fx.repo,
        branch: "feature-1",
        sequence: head,
      });
      expect(input.secrets).toContain(input.jobToken);
      expect(input.secrets).toHaveLength(3); // the request token and both JWTs
    }

    const runs = await checkRunsAt(app, fx.repo, "feature-1", head);
    expect(Object.keys(runs)).toEqual(["unit/fail", "unit/pass"]);
    const [job] = await app.sql<{ id: string }>(
      "SELECT id::text FROM ci_jobs WHERE sequence = $1 AND trigger_type = 'push'",
      [head],
    );
    expect(runs["unit/pass"]).toMatchObject({
      status: "passed",
      reporter: `ci-job:${job!.id}`,
      log_url: `${app.url}/run/${job!.id}/logs/unit/pass`,
    });
    expect(runs["unit/fail"]).toMatchObject({
      status: "failed",
      log_url: `${app.url}/run/${job!.id}/logs/unit/fail`,
    });
    expect(await readLog(app, fx.owner, runs["unit/fail"]!.log_url!)).toBe("$ exit 3\nexit 3\n");
    expect(await storedJob(app, job!.id)).toMatchObject({
      status: "failed",
      error: outcome.error,
      token_hash: null,
    });
  });

  it("heartbeats while a check runs", async () => {
    await createBranch(fx, "feature-2");
    await commit(fx, "feature-2", { "notes/a.md": "# B\n" }, "notes");
    let beats = 0;
    const runner: RunCheck = async (input) => {
      // Each beat at the manual clock's new time: last_heartbeat_at moves only if beats arrive.
      const [{ claimed_at }] = (await app.sql<{ claimed_at: Date }>(
        "SELECT claimed_at FROM ci_jobs WHERE status = 'claimed'",
      )) as [{ claimed_at: Date }];
      app.clock.advance(1000);
      for (let i = 0; i < 100 && beats === 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        const [row] = await app.sql<{ last: Date }>(
          "SELECT last_heartbeat_at AS last FROM ci_jobs WHERE status = 'claimed'",
        );
        if (row && row.last.getTime() > claimed_at.getTime()) beats += 1;
      }
      return { conclusion: "passed", summary: input.check.name, log: Buffer.from("") };
    };
    await workOneJob(workerConfig(app), runner);
    expect(beats).toBeGreaterThan(0);
  });

  it("stops at once and posts nothing more when the reaper takes the job back (the heartbeat gets 401)", async () => {
    await createBranch(fx, "feature-3");
    const head = await commit(fx, "feature-3", { "notes/a.md": "# C\n" }, "notes");
    let aborted = 0;
    const runner: RunCheck = (input) =>
      new Promise((resolve) => {
        input.signal?.addEventListener("abort", () => {
          aborted += 1;
          resolve({ conclusion: "failed", summary: "killed", log: Buffer.from("killed\n") });
        });
      });
    const work = workOneJob(workerConfig(app), runner);
    // Wait until both checks are pending (so the worker is in its run phase), then reap. A busy
    // machine can take many seconds to get there; reaping earlier would test something else.
    let pending = 0;
    for (const deadline = Date.now() + 60_000; pending < 2 && Date.now() < deadline; ) {
      pending = Object.keys(await checkRunsAt(app, fx.repo, "feature-3", head)).length;
      if (pending < 2) await new Promise((r) => setTimeout(r, 25));
    }
    expect(pending).toBe(2);
    // A heartbeat in flight as the clock moves stamps the job with the moved clock's time, and the
    // reaper finds it fresh: move the clock again and reap until the reaper takes it.
    let reaped = { requeued: [] as string[] };
    for (const deadline = Date.now() + 30_000; reaped.requeued.length === 0 && Date.now() < deadline; ) {
      app.clock.advance(STALE_AFTER_MS + 1000);
      reaped = await reapOnce(app.server.ctx);
    }
    expect(reaped.requeued).toHaveLength(1);
    const outcome = await work;
    expect(outcome.status).toBe("lost");
    expect(aborted).toBe(2);
    const runs = await checkRunsAt(app, fx.repo, "feature-3", head);
    expect(Object.values(runs).map((r) => r.status)).toEqual(["pending", "pending"]);
    expect(await storedJob(app, reaped.requeued[0]!)).toMatchObject({ status: "queued", attempt: 1 });
    // Take it out of the queue for the next test.
    const again = await workOneJob(workerConfig(app), scriptedRunner([]));
    expect(again.status).toBe("failed");
  }, 90_000);
});

describe("stopping the worker", () => {
  it("abandoned (SIGTERM's grace over): the checks are killed, nothing final is posted, the job stays claimed for the reaper", async () => {
    await createBranch(fx, "feature-4");
    const head = await commit(fx, "feature-4", { "notes/a.md": "# D\n" }, "notes");
    const abandon = new AbortController();
    let started = 0;
    const runner: RunCheck = (input) =>
      new Promise((resolve) => {
        started += 1;
        if (started === 2) abandon.abort();
        input.signal?.addEventListener("abort", () =>
          resolve({ conclusion: "failed", summary: "cancelled", log: Buffer.from("cancelled\n") }),
        );
      });
    const outcome = await workOneJob(workerConfig(app), runner, { abandon: abandon.signal });
    expect(outcome.status).toBe("abandoned");
    const runs = await checkRunsAt(app, fx.repo, "feature-4", head);
    expect(Object.values(runs).map((r) => [r.status, r.log_url])).toEqual([
      ["pending", null],
      ["pending", null],
    ]);
    const [job] = await app.sql<{ id: string; status: string }>(
      "SELECT id::text, status FROM ci_jobs WHERE sequence = $1 AND trigger_type = 'push'",
      [head],
    );
    expect(job?.status).toBe("claimed");
    // The reaper gives it to the next worker, which finishes it.
    app.clock.advance(STALE_AFTER_MS + 1000);
    expect((await reapOnce(app.server.ctx)).requeued).toEqual([job?.id]);
    expect((await workOneJob(workerConfig(app), scriptedRunner([]))).status).toBe("failed");
    expect(await storedJob(app, job?.id ?? "")).toMatchObject({ status: "failed", attempt: 2 });
  });
});

describe("hostile archives, through the worker", () => {
  // Manual runs (queued at once, no delivery to wait for) of one branch, one per archive.
  const branch = "hostile";
  let head = 0;
  it.each(hostileArchives.map((h) => [h.name, h] as const))(
    "%s: every check fails with the reason in its log, no step runs",
    async (_name, hostile) => {
      if (head === 0) {
        await createBranch(fx, branch);
        head = await commit(fx, branch, { "notes/a.md": "# hostile\n" }, "notes");
      }
      const run = await fx.client.post(`${fx.base}/ci/run`, { branch });
      expect(run.status, JSON.stringify(run.body)).toBe(201);
      app.swap =
        hostile.entries().length === 0 ? Buffer.from("not a gzip stream") : await tarGz(hostile.entries());
      const before = app.swapped;
      const seen: CheckInput[] = [];
      const base = workerConfig(app);
      const outcome = await workOneJob(
        workerConfig(app, { archive: { ...base.archive, ...hostile.limits } }),
        scriptedRunner(seen),
      );
      app.swap = null;
      expect(app.swapped).toBe(before + 1);
      expect(seen).toEqual([]);
      expect(outcome.status).toBe("failed");
      expect(outcome.error).toMatch(/^The source archive was refused, so no step ran: /);
      expect(outcome.error).toMatch(hostile.reason);
      const runs = await checkRunsAt(app, fx.repo, branch, head);
      for (const name of ["unit/fail", "unit/pass"]) {
        expect(runs[name]?.status).toBe("failed");
        const log = await readLog(app, fx.owner, runs[name]!.log_url!);
        expect(log).toMatch(/^The source archive was refused, so no step ran: /);
        expect(log).toMatch(hostile.reason);
      }
    },
  );
});
