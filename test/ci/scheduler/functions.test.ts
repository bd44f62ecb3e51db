import http from "node:http";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cloudFunctions } from "../../../functions/groups.ts";
import { REAP_EVERY_MS } from "../../../shared/ci/jobs/queue.ts";
import { ManualClock } from "../../../shared/clock.ts";
import { nodeHandler, readBody } from "../../../shared/http/node.ts";
import { api } from "../../support/api.ts";
import { startTestApp } from "../../support/app.ts";
import { client } from "../../support/client.ts";
import { commit, expectStatus, repoWithOwner, useFixture } from "../../support/world.ts";
import { WORKER_TOKEN, waitForCount } from "../support.ts";
import { jobsOf } from "./scheduler-support.ts";

/**
 * The cloud shape of the cron runner and the reaper: `functions/index.ts` registers `ciCron` and
 * `ciReaper` with the functions framework, and Cloud Scheduler calls them. Served here by the
 * framework's own test server, on the database of an ordinary test app (used to make repos,
 * queue and claim jobs). The functions' context runs on the real clock; the reaper's pause of
 * REAP_EVERY_MS between its passes is waited on the app's manual clock instead, by serving the
 * very route table registered as `ciReaper` on the app's context.
 */

const saved = { ...process.env };

const clock = new ManualClock();
const app = useFixture(() =>
  startTestApp({ SVC_CI_WORKER_TOKEN: WORKER_TOKEN, SVC_CI_TIMERS: "false" }, { context: { clock } }),
);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  Object.assign(process.env, {
    DATABASE_URL: app.databaseUrl,
    OIDC_ISSUER: app.idp.issuer,
    LOG_LEVEL: "error",
    SVC_BLOB_LOCAL_DIR: app.server.ctx.config.SVC_BLOB_LOCAL_DIR,
  });
  delete process.env["RUNNER_URL"];
  await import("../../../functions/index.ts");
});
afterAll(async () => {
  process.env = saved;
});

/** POSTs to the registered function `fn` through the framework's server. */
async function call(fn: string, path: string) {
  const server = getTestServer(fn);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST" });
    return { status: res.status, body: (await res.json()) as unknown };
  } finally {
    await new Promise((r) => server.close(r));
  }
}

/** POSTs to `path` of the `ciReaper` function's route table, served on the app's context and clock. */
async function callReaperOnAppClock(path: string) {
  const routes = cloudFunctions["ciReaper"];
  if (!routes) throw new Error("no ciReaper function in functions/groups.ts");
  const server = http.createServer(nodeHandler(app.server.ctx, routes, (req) => readBody(req, 1024)));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST" });
    return { status: res.status, body: (await res.json()) as unknown };
  } finally {
    await new Promise((r) => server.close(r));
  }
}

const worker = () => client(app.url, async () => WORKER_TOKEN);

/** Claims queued jobs until `id` comes, completing any other; returns the claim. */
async function claimJob(id: string) {
  for (;;) {
    const res = await api(worker()).post("/claim");
    expect(res.status, `claiming ${id}: ${JSON.stringify(res.body)}`).toBe(200);
    const job = expectStatus(res, 200)!;
    if (job.id === id) return job;
    await client(app.url, async () => job.request_token).post(`/jobs/${job.id}/complete`, {
      status: "failed",
    });
  }
}

/** Makes a claim's heartbeat stale on the real clock (5 minutes ago). */
const staleHeartbeat = (id: string) =>
  app.sql("UPDATE ci_jobs SET last_heartbeat_at = now() - interval '5 minutes' WHERE id = $1", [id]);

describe("CI timers as Cloud Scheduler functions", () => {
  it("functions/index.ts registers ciCron and ciReaper (and getTestServer refuses a name nobody registered)", () => {
    expect(() => getTestServer("ciCron")).not.toThrow();
    expect(() => getTestServer("ciReaper")).not.toThrow();
    expect(() => getTestServer("noSuchCiFunction")).toThrow(/not registered/);
  });

  it("ciCron queues the schedule jobs of the current minute", async () => {
    const everyMinute = 'on:\n  schedule:\n    - cron: "* * * * *"\n';
    const yaml = `${everyMinute}checks:\n  - name: cron/check\n    image: alpine:3.20\n    steps: [echo]\n`;
    await commit(fx, "main", { ".svc/ci.yaml": yaml });
    const head = await commit(fx, "main", { "a.md": "a\n" });
    const res = await call("ciCron", "/ci-cron");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const jobs = (await jobsOf(app, fx.repo)).filter((j) => j.trigger_type === "schedule");
    expect(jobs).toEqual([
      expect.objectContaining({
        trigger_branch: "main",
        sequence: head,
        checks: ["cron/check"],
        status: "queued",
      }),
    ]);
    expect(res.body).toEqual({ jobs: [jobs[0]!.id] });
    // Only the cron route: the reaper's path is not served by ciCron.
    expect((await call("ciCron", "/ci-reap")).status).toBe(404);
  });

  it("ciReaper reaps twice, 30 seconds apart: a stale claim is re-queued at once, and one gone stale meanwhile at the second pass", async () => {
    const run = await api(fx.client).post("/repos/:repo*/-/ci/run", {
      params: { repo: fx.repo },
      body: { branch: "main" },
    });
    const id = expectStatus(run, 201).run_id;
    const first = await claimJob(id);
    expect(first.attempt).toBe(1);
    await staleHeartbeat(id);

    let answered = false;
    const reaping = callReaperOnAppClock("/ci-reap").finally(() => {
      answered = true;
    });
    // First pass: back in the queue right away, while the call waits out its pause.
    await waitForCount(
      app,
      "SELECT count(*)::int AS n FROM ci_jobs WHERE id = $1 AND status = 'queued'",
      [id],
      1,
    );
    await expect.poll(() => clock.sleeping).toBe(1);
    // A new worker takes it and then goes silent too; the second pass takes it back.
    const second = await claimJob(id);
    expect(second.attempt).toBe(2);
    await staleHeartbeat(id);
    // Not a moment before REAP_EVERY_MS has passed on the clock.
    clock.advance(REAP_EVERY_MS - 1);
    expect(await app.sql("SELECT status FROM ci_jobs WHERE id = $1", [id])).toEqual([{ status: "claimed" }]);
    expect(clock.sleeping).toBe(1);
    expect(answered).toBe(false);
    clock.advance(1);

    const res = await reaping;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ requeued: [id, id], failed: [] });
    const [row] = await app.sql("SELECT status, attempt FROM ci_jobs WHERE id = $1", [id]);
    expect(row).toEqual({ status: "queued", attempt: 2 });
  });
});
