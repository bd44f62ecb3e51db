import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import type { ClaimResponse } from "../../shared/api/ci.ts";
import { claimOldest, enqueueJob } from "../../shared/ci/jobs/queue.ts";
import type { JobRow } from "../../shared/ci/jobs/records.ts";
import { newRequestToken } from "../../shared/ci/jobs/request-token.ts";
import { ManualClock } from "../../shared/clock.ts";
import { api } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { type Client, client, type Res } from "../support/client.ts";
import { onFreePort } from "../support/ports.ts";

/** The static worker token of the test apps (local mode's SVC_CI_WORKER_TOKEN). */
export const WORKER_TOKEN = "worker-token-for-the-tests-0123456789";

export interface CiApp extends TestApp {
  clock: ManualClock;
  /** A client that authenticates as the CI worker (the static token). */
  worker: Client;
  /** A client that sends `token` as its bearer (a request token or a job JWT). */
  bearer(token: string): Client;
}

/**
 * A test app set up as `npm start` runs CI: RUNNER_URL is the app itself (so the scheduler's
 * subscription is registered at start and commits reach `/webhook` through real signed webhook
 * deliveries), a static worker token, a log directory, a manual clock, and no timers (tests run
 * the reaper and cron passes themselves).
 */
export async function startCiApp(env: Record<string, string> = {}): Promise<CiApp> {
  const logDir = await mkdtemp(path.join(tmpdir(), "quire-ci-logs-"));
  const clock = new ManualClock(new Date());
  const app = await onFreePort((port) =>
    startTestApp(
      {
        PORT: String(port),
        RUNNER_URL: `http://127.0.0.1:${port}`,
        SVC_CI_WORKER_TOKEN: WORKER_TOKEN,
        SVC_CI_LOG_DIR: logDir,
        SVC_CI_TIMERS: "false",
        SVC_WEBHOOK_ALLOW_PRIVATE: "false",
        LOG_LEVEL: process.env["QUIRE_TEST_LOG_LEVEL"] ?? "error",
        ...env,
      },
      { context: { clock } },
    ),
  );
  const close = app.close;
  return {
    ...app,
    clock,
    worker: client(app.url, async () => WORKER_TOKEN),
    bearer: (token) => client(app.url, async () => token),
    async close() {
      await close();
      await rm(logDir, { recursive: true, force: true });
    },
  };
}

/** Polls `/claim` until a job comes (the webhook delivery is asynchronous), or fails after `ms`. */
export async function claimWithin(app: CiApp, ms = 10_000): Promise<Res<ClaimResponse>> {
  const until = Date.now() + ms;
  for (;;) {
    const res = await api(app.worker).post("/claim");
    if (res.status !== 204 || Date.now() > until) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      if (!res.ok || res.body === undefined) throw new Error("a 200 claim without a job");
      return { status: res.status, headers: res.headers, body: res.body };
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until `sql` returns a count of at least `n` (a job queued by a delivery), or fails. */
export async function waitForCount(app: TestApp, sql: string, values: unknown[], n: number, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const [row] = await app.sql<{ n: number }>(sql, values);
    if ((row?.n ?? 0) >= n) return row!.n;
    if (Date.now() > until) expect(row?.n ?? 0, `waited ${ms} ms for ${sql}`).toBeGreaterThanOrEqual(n);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A `.svc/ci.yaml` with one check per name, run on every push and on proposals to main. */
export function ciYaml(checks: string[], on = "on:\n  push:\n  proposal:\n    base_branches: [main]\n") {
  const list = checks
    .map((name) => `  - name: ${name}\n    image: alpine:3.20\n    steps:\n      - echo ${name}\n`)
    .join("");
  return `${on}checks:\n${list}`;
}

/**
 * A manual job queued for `branch` of `repo` at its head and claimed at once, straight through the
 * queue's own functions (no worker, no HTTP): for tests that need a claimed job and its request
 * token but are not about how it got there. The app's queue must hold no older queued job.
 */
export async function queueAndClaim(
  app: TestApp,
  repo: string,
  branch: string,
  opts: { checks?: string[]; createdBy?: string } = {},
): Promise<{ job: JobRow; requestToken: string }> {
  const ctx = app.server.ctx;
  const [row] = await app.sql<{ id: number; repo_id: number; head_sequence: number }>(
    `SELECT b.id, b.repo_id, b.head_sequence FROM branches b JOIN repos r ON r.id = b.repo_id
     WHERE r.name = $1 AND b.name = $2`,
    [repo, branch],
  );
  expect(row, `branch ${branch} of ${repo}`).toBeDefined();
  const id = await enqueueJob(ctx.pool, {
    repoId: row!.repo_id,
    branchId: row!.id,
    sequence: row!.head_sequence,
    triggerType: "manual",
    triggerBranch: branch,
    triggerBaseBranch: null,
    triggerProposalId: null,
    triggerKey: null,
    checks: opts.checks ?? ["test/check"],
    createdBy: opts.createdBy ?? "tester@example.com",
    now: ctx.clock.now(),
  });
  const request = newRequestToken();
  const job = await claimOldest(ctx.pool, {
    worker: "test-worker",
    tokenHash: request.hash,
    now: ctx.clock.now(),
  });
  expect(job?.id, `the claim takes the job just queued on ${repo} ${branch}`).toBe(id);
  return { job: job!, requestToken: request.token };
}
