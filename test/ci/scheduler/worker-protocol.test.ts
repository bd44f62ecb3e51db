import { createHash } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { claimResponse, heartbeatResponse } from "../../../shared/api/ci.ts";
import { MAX_ATTEMPTS, STALE_AFTER_MS } from "../../../shared/ci/jobs/queue.ts";
import { reapOnce } from "../../../shared/ci/scheduler/timers.ts";
import { api, unchecked } from "../../support/api.ts";
import type { Client, Res } from "../../support/client.ts";
import {
  commit,
  errorOf,
  expectOk,
  expectStatus,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../../support/world.ts";
import { ciYaml, startCiApp, WORKER_TOKEN } from "../support.ts";
import { settle, storedJob } from "./scheduler-support.ts";

/**
 * The worker protocol over HTTP (SPEC "CI scheduler endpoints", Authentication 6, "CI job"
 * states): claim with the worker token, heartbeat and complete with the claim's request token,
 * the reaper that takes stale claims back, and the request token's binding to one job and one
 * repo. Jobs come from manual runs only (the `on` block matches no branch), so every test knows
 * exactly what is queued; each test starts with an empty queue.
 */

const NEVER = "on:\n  push:\n    branches: [nope]\n";

const app = useFixture(startCiApp);
const fx = useFixture(() => repoWithOwner(app));
const other = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  for (const repo of [fx, other]) {
    await commit(repo, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"], NEVER) });
    await settle(app, repo.repo);
  }
});

/** Takes every claim back and completes every queued job, so the queue is empty. */
async function emptyQueue() {
  app.clock.advance(STALE_AFTER_MS + 1000);
  await reapOnce(app.server.ctx);
  for (;;) {
    const claim = await api(app.worker).post("/claim");
    if (claim.status === 204) break;
    const job = expectStatus(claim, 200)!;
    const done = await app.bearer(job.request_token).post(`/jobs/${job.id}/complete`, {
      status: "failed",
      error: "cleared by the test",
    });
    expect(done.status).toBe(200);
  }
  const [row] = await app.sql<{ n: number }>(
    "SELECT count(*)::int AS n FROM ci_jobs WHERE status IN ('queued', 'claimed')",
  );
  expect(row!.n).toBe(0);
}
beforeEach(emptyQueue);

/** Queues a manual run of `repo`'s main; the clock moves a second on, so queue order is clear. */
async function queueRun(repo: RepoFixture = fx): Promise<string> {
  app.clock.advance(1000);
  const res = await api(repo.client).post("/repos/:repo*/-/ci/run", {
    params: { repo: repo.repo },
    body: { branch: "main" },
  });
  return expectStatus(res, 201).run_id;
}

interface Claimed {
  id: string;
  token: string;
  attempt: number;
  /** A client holding the claim's request token. */
  as: Client;
}

async function claim(): Promise<Claimed> {
  const job = expectStatus(await api(app.worker).post("/claim"), 200)!;
  return {
    id: job.id,
    token: job.request_token,
    attempt: job.attempt,
    as: app.bearer(job.request_token),
  };
}

function expect401(res: Res<unknown>, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(401);
  expect(errorOf(res).code).toBe("UNAUTHENTICATED");
}

describe("claim", () => {
  it("without the worker token, or with a wrong one, is 401 and claims nothing", async () => {
    const id = await queueRun();
    expect401(await app.anonymous.post("/claim"), "no token");
    expect401(await app.bearer("not-the-worker-token-0123456789").post("/claim"), "wrong token");
    expect401(await app.bearer(`${WORKER_TOKEN}x`).post("/claim"), "token with a suffix");
    expect401(await app.bearer(WORKER_TOKEN.slice(0, -1)).post("/claim"), "token prefix");
    // A user's ID token is not a worker's.
    expect401(await fx.client.post("/claim"), "a user's ID token");
    expect(await storedJob(app, id)).toMatchObject({ status: "queued", attempt: 0, token_hash: null });
    const claimed = await claim();
    expect(claimed.id).toBe(id);
  });

  it("an empty queue answers 204 with no body", async () => {
    const res = await app.worker.post("/claim");
    expect(res.status).toBe(204);
    expect(res.body).toBe("");
  });

  it("hands out the job with a one-time request token, stored only as its SHA-256", async () => {
    const id = await queueRun();
    const job = expectStatus(await api(app.worker).post("/claim"), 200)!;
    expect(job).toMatchObject({
      id,
      repo: fx.repo,
      branch: "main",
      status: "claimed",
      trigger_type: "manual",
      attempt: 1,
      oidc_token_url: `${app.url}/ci/token`,
    });
    expect(job.request_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(job.request_token, "base64url")).toHaveLength(32);
    const stored = await storedJob(app, id);
    expect(stored.token_hash!.equals(createHash("sha256").update(job.request_token).digest())).toBe(true);
    const columns = await app.sql<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'ci_jobs'",
    );
    expect(columns.map((c) => c.column_name)).not.toContain("request_token");
  });

  it("64 concurrent claims against 20 queued jobs: each job claimed exactly once, the rest 204", async () => {
    const queued: string[] = [];
    for (let i = 0; i < 20; i++) queued.push(await queueRun());
    const answers = await Promise.all(Array.from({ length: 64 }, () => app.worker.post("/claim")));
    const ok = answers.filter((a) => a.status === 200);
    const empty = answers.filter((a) => a.status === 204);
    expect(ok.length + empty.length, answers.map((a) => a.status).join(",")).toBe(64);
    expect(ok).toHaveLength(20);
    expect(empty).toHaveLength(44);
    const jobs = ok.map((a) => claimResponse.parse(a.body));
    const ids = jobs.map((job) => job.id);
    expect(new Set(ids).size).toBe(20);
    expect([...ids].sort()).toEqual([...queued].sort());
    expect(new Set(jobs.map((job) => job.request_token)).size).toBe(20);
    const rows = await app.sql<{ status: string; attempt: number }>(
      "SELECT status, attempt FROM ci_jobs WHERE id = ANY ($1::uuid[])",
      [queued],
    );
    expect(rows).toHaveLength(20);
    expect(rows.every((r) => r.status === "claimed" && r.attempt === 1)).toBe(true);
  });

  it("takes the oldest queued job first", async () => {
    const order: string[] = [];
    for (const repo of [other, fx, other, fx, fx]) order.push(await queueRun(repo));
    const claimed: string[] = [];
    for (let i = 0; i < order.length; i++) claimed.push((await claim()).id);
    expect(claimed).toEqual(order);
    expect((await app.worker.post("/claim")).status).toBe(204);
  });
});

describe("heartbeat and complete", () => {
  it("a heartbeat with the claim's token is 200 and moves last_heartbeat_at to now", async () => {
    await queueRun();
    const job = await claim();
    app.clock.advance(30_000);
    // Sent as the worker sends it, with no body; read through the route's declared reply.
    const res = await job.as.post(`/jobs/${job.id}/heartbeat`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const beat = heartbeatResponse.parse(res.body);
    expect(beat).toMatchObject({ id: job.id, status: "claimed" });
    expect(new Date(beat.last_heartbeat_at ?? "").getTime()).toBe(app.clock.now().getTime());
  });

  it("another job's request token is 401 on heartbeat and complete, and changes neither job", async () => {
    await queueRun();
    await queueRun();
    const a = await claim();
    const b = await claim();
    const before = await storedJob(app, a.id);
    expect401(await b.as.post(`/jobs/${a.id}/heartbeat`), "B's token on A's heartbeat");
    expect401(await b.as.post(`/jobs/${a.id}/complete`, { status: "passed" }), "B's token on A's complete");
    expect(await storedJob(app, a.id)).toEqual(before);
    expect(await storedJob(app, b.id)).toMatchObject({ status: "claimed" });
    // A token that was never handed out, and no token at all.
    const forged = Buffer.alloc(32, 7).toString("base64url");
    expect401(await app.bearer(forged).post(`/jobs/${a.id}/heartbeat`), "a forged token");
    expect401(await app.anonymous.post(`/jobs/${a.id}/complete`, { status: "passed" }), "no token");
    // Both still work with their own tokens.
    expect((await a.as.post(`/jobs/${a.id}/complete`, { status: "passed" })).status).toBe(200);
    expect((await b.as.post(`/jobs/${b.id}/complete`, { status: "failed", error: "x" })).status).toBe(200);
    expect(await storedJob(app, b.id)).toMatchObject({ status: "failed", error: "x", token_hash: null });
  });

  it("after complete the request token is 401 everywhere, and the final status stays", async () => {
    await queueRun();
    const job = await claim();
    const done = await job.as.post(`/jobs/${job.id}/complete`, { status: "passed" });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ id: job.id, status: "passed", error: null });
    expect401(await job.as.post(`/jobs/${job.id}/heartbeat`), "heartbeat after complete");
    expect401(await job.as.post(`/jobs/${job.id}/complete`, { status: "failed" }), "complete again");
    expect401(await job.as.post("/ci/token", { audience: "quire" }), "token exchange after complete");
    expect(await storedJob(app, job.id)).toMatchObject({ status: "passed", token_hash: null });
  });

  it.each([
    ["an unknown status", { status: "done" }],
    ["no status", {}],
    ["an extra field", { status: "passed", exit_code: 0 }],
    ["an error that is not a string", { status: "failed", error: 1 }],
    ["a status of another case", { status: "PASSED" }],
    ["a pending status", { status: "pending" }],
  ])("complete with a bad body (%s) is 400 and changes nothing", async (_what, body) => {
    await queueRun();
    const job = await claim();
    const before = await storedJob(app, job.id);
    const res = await unchecked(job.as).post("/jobs/:id/complete", { params: { id: job.id }, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(errorOf(res).code).toBe("VALIDATION_FAILED");
    expect(await storedJob(app, job.id)).toEqual(before);
    // The claim still holds: the token still heartbeats.
    expect((await job.as.post(`/jobs/${job.id}/heartbeat`)).status).toBe(200);
  });

  it("complete with malformed JSON is 400 and changes nothing", async () => {
    await queueRun();
    const job = await claim();
    const before = await storedJob(app, job.id);
    const res = await job.as.raw("POST", `/jobs/${job.id}/complete`, {
      body: '{"status": "passed"',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(await storedJob(app, job.id)).toEqual(before);
  });
});

describe("the reaper", () => {
  it("re-queues a claim with no heartbeat for over 2 minutes: the old token is 401, the job keeps its attempt and goes to a new worker with a new token", async () => {
    const id = await queueRun();
    const first = await claim();
    expect(first).toMatchObject({ id, attempt: 1 });
    app.clock.advance(STALE_AFTER_MS + 1000);
    const reaped = await reapOnce(app.server.ctx);
    expect(reaped).toEqual({ requeued: [id], failed: [] });
    expect(await storedJob(app, id)).toMatchObject({ status: "queued", attempt: 1, token_hash: null });
    expect401(await first.as.post(`/jobs/${id}/heartbeat`), "old token heartbeat");
    expect401(await first.as.post(`/jobs/${id}/complete`, { status: "passed" }), "old token complete");
    expect401(await first.as.post("/ci/token", { audience: "quire" }), "old token exchange");
    expect(await storedJob(app, id)).toMatchObject({ status: "queued", attempt: 1 });

    const second = await claim();
    expect(second).toMatchObject({ id, attempt: 2 });
    expect(second.token).not.toBe(first.token);
    expect((await second.as.post(`/jobs/${id}/heartbeat`)).status).toBe(200);
    expect401(await first.as.post(`/jobs/${id}/heartbeat`), "old token after the new claim");
    expect((await second.as.post(`/jobs/${id}/complete`, { status: "passed" })).status).toBe(200);
  });

  it("a re-queued job keeps its place: it is claimed before jobs queued after it", async () => {
    const early = await queueRun();
    const stale = await claim();
    expect(stale.id).toBe(early);
    const later = [await queueRun(), await queueRun()];
    app.clock.advance(STALE_AFTER_MS + 1000);
    expect(await reapOnce(app.server.ctx)).toEqual({ requeued: [early], failed: [] });
    expect([(await claim()).id, (await claim()).id, (await claim()).id]).toEqual([early, ...later]);
  });

  it("leaves alone a claim whose heartbeat is fresh, however old the claim", async () => {
    const id = await queueRun();
    const job = await claim();
    for (let i = 0; i < 3; i++) {
      app.clock.advance(STALE_AFTER_MS - 30_000);
      expect((await job.as.post(`/jobs/${id}/heartbeat`)).status).toBe(200);
    }
    app.clock.advance(STALE_AFTER_MS - 1000);
    expect(await reapOnce(app.server.ctx)).toEqual({ requeued: [], failed: [] });
    expect(await storedJob(app, id)).toMatchObject({ status: "claimed", attempt: 1 });
    expect((await job.as.post(`/jobs/${id}/complete`, { status: "passed" })).status).toBe(200);
  });

  it(`fails a job after ${MAX_ATTEMPTS} stale claims, with an error, and stops handing it out`, async () => {
    const id = await queueRun();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const job = await claim();
      expect(job).toMatchObject({ id, attempt });
      app.clock.advance(STALE_AFTER_MS + 1000);
      const reaped = await reapOnce(app.server.ctx);
      expect(reaped).toEqual(
        attempt < MAX_ATTEMPTS ? { requeued: [id], failed: [] } : { requeued: [], failed: [id] },
      );
    }
    const failed = await storedJob(app, id);
    expect(failed).toMatchObject({ status: "failed", attempt: MAX_ATTEMPTS, token_hash: null });
    expect(failed.error).toMatch(/heartbeat/);
    expect((await app.worker.post("/claim")).status).toBe(204);
    const run = await api(fx.client).get("/run/:id", { params: { id } });
    expectOk(run, 200);
    expect(run.body).toMatchObject({ status: "failed", attempt: MAX_ATTEMPTS, error: failed.error });
    expect(run.body.completed_at).not.toBeNull();
  });
});

describe("the request token elsewhere", () => {
  it("/ci/token with a bad body is 400 and issues nothing; with no token it is 401", async () => {
    await queueRun();
    const job = await claim();
    for (const body of [{}, { audience: "" }, { audience: 5 }, { audience: "quire", extra: 1 }, undefined]) {
      const res = await job.as.post("/ci/token", body);
      expect(res.status, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(400);
    }
    expect401(await app.anonymous.post("/ci/token", { audience: "quire" }), "no token");
    expect401(await app.bearer("not a token").post("/ci/token", { audience: "quire" }), "a malformed token");
    expect(await app.sql("SELECT jti FROM ci_token_issuances WHERE job_id = $1", [job.id])).toEqual([]);
    // The good request works, so the 400s were about the bodies.
    expect((await job.as.post("/ci/token", { audience: "quire" })).status).toBe(200);
    expect(await app.sql("SELECT jti FROM ci_token_issuances WHERE job_id = $1", [job.id])).toHaveLength(1);
  });

  it("the request token of a job of repo A is 403 on repo B's presign and log upload", async () => {
    await queueRun(fx);
    const job = await claim();
    const presign = await job.as.post(`${other.base}/archive/presign`);
    expect(presign.status, JSON.stringify(presign.body)).toBe(403);
    expect(errorOf(presign).code).toBe("FORBIDDEN");
    const log = await job.as.raw("POST", `${other.base}/check/x/logs`, {
      body: "log for another repo\n",
      headers: { "content-type": "text/plain" },
    });
    expect(log.status, JSON.stringify(log.body)).toBe(403);
    expect(errorOf(log).code).toBe("FORBIDDEN");
    expect(await app.sql("SELECT check_name FROM ci_logs WHERE job_id = $1", [job.id])).toEqual([]);
    // On its own repo both work.
    expect((await job.as.post(`${fx.base}/archive/presign`)).status).toBe(200);
    const own = await job.as.raw("POST", `${fx.base}/check/x/logs`, { body: "own\n" });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
  });
});
