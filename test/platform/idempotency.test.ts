import { once } from "node:events";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimResponse, heartbeatResponse } from "../../shared/api/ci.ts";
import { commitResponse } from "../../shared/api/content.ts";
import { enqueueJob } from "../../shared/ci/jobs/queue.ts";
import { ManualClock } from "../../shared/clock.ts";
import { mint } from "../ci/jobtoken/support.ts";
import { queueAndClaim } from "../ci/support.ts";
import { commit, createBranch, repoWithOwner } from "../commits/fixtures.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { client } from "../support/client.ts";
import { errorOf } from "../support/world.ts";
import { commitBody, counter, keyed, newKey, replayed } from "./idempotency-support.ts";

const WORKER_TOKEN = "worker-token-for-the-idempotency-tests";

let app: TestApp;
let clock: ManualClock;
let count: ReturnType<typeof counter>["count"];
let commitsOf: ReturnType<typeof counter>["commitsOf"];
let eventsOf: ReturnType<typeof counter>["eventsOf"];
beforeAll(async () => {
  clock = new ManualClock(new Date());
  app = await startTestApp({ SVC_CI_WORKER_TOKEN: WORKER_TOKEN }, { context: { clock } });
  ({ count, commitsOf, eventsOf } = counter(app));
});
afterAll(() => app.close());

describe("Idempotency-Key on a commit", () => {
  it("does the work once: a retry gets the first answer, marked replayed", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    const first = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("one"));
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(replayed(first)).toBe(false);
    const again = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("one"));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(replayed(again)).toBe(true);
    expect(again.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await commitsOf(fx)).toBe(1);
    expect(await eventsOf(fx, "com.svc.commit.created")).toBe(1);
  });

  it("without a key, the same request is done twice (the case the key exists for)", async () => {
    const fx = await repoWithOwner(app);
    expect((await fx.client.post(`${fx.base}/commit`, commitBody("one"))).status).toBe(201);
    // Done again, not answered as the first: it now changes nothing, so it is refused.
    const again = await fx.client.post(`${fx.base}/commit`, commitBody("one"));
    expect(errorOf(again).code).toBe("EMPTY_COMMIT");
    expect(await commitsOf(fx)).toBe(1);
  });

  it("answers 422 IDEMPOTENCY_KEY_REUSED for the same key with another body, path or method, and does nothing", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "feature");
    const key = newKey();
    expect((await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("one"))).status).toBe(201);
    const attempts = [
      keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("two")),
      keyed(fx.client, "POST", `${fx.base}/commit?x=1`, key, commitBody("one")),
      keyed(fx.client, "POST", `${fx.base}/branch`, key, { name: "other" }),
      keyed(fx.client, "PATCH", `${fx.base}/branch/feature`, key, { draft: false }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(422);
      expect(errorOf(res).code).toBe("IDEMPOTENCY_KEY_REUSED");
    }
    expect(await commitsOf(fx)).toBe(1);
    expect(await count("branches WHERE repo_id = $1 AND name = 'other'", [fx.repoId])).toBe(0);
  });

  it("replays a 4xx too: a commit to a missing branch stays 404 after the branch exists", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    const first = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x", "later"));
    expect(first.status).toBe(404);
    expect(errorOf(first).code).toBe("BRANCH_NOT_FOUND");
    await createBranch(fx, "later");
    const again = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x", "later"));
    expect(again.status).toBe(404);
    expect(again.body).toEqual(first.body);
    expect(replayed(again)).toBe(true);
    expect(await commitsOf(fx)).toBe(0);
  });

  it("replays a validation refusal (400)", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    const bad = { branch: "main", message: "", files: [] };
    const first = await keyed(fx.client, "POST", `${fx.base}/commit`, key, bad);
    expect(first.status).toBe(400);
    const again = await keyed(fx.client, "POST", `${fx.base}/commit`, key, bad);
    expect([again.status, again.body, replayed(again)]).toEqual([400, first.body, true]);
  });

  it("does the work once when several requests with one key arrive together; the others wait (409) or replay", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("race"))),
    );
    const done = results.filter((r) => r.status === 201);
    const busy = results.filter((r) => r.status === 409);
    expect(done.length + busy.length).toBe(8);
    const [first, ...others] = done.filter((r) => !replayed(r));
    expect(others).toHaveLength(0);
    expect(first?.body).toMatchObject({ sequence: 1, message: "write race" });
    for (const r of done) expect(r.body).toEqual(first?.body);
    for (const r of busy) {
      expect(errorOf(r).code).toBe("IDEMPOTENCY_IN_PROGRESS");
      expect(r.headers.get("retry-after")).toBe("1");
    }
    expect(await commitsOf(fx)).toBe(1);
    // Once the first is done, every retry gets its answer.
    const later = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("race"));
    expect([later.status, later.body, replayed(later)]).toEqual([201, first?.body, true]);
  });

  it("keeps keys per identity: two callers with one key each do their own work", async () => {
    const fx = await repoWithOwner(app);
    const other = `${fx.org}-writer@example.com`;
    expect((await fx.client.put(`${fx.base}/roles/${other}`, { role: "maintainer" })).status).toBe(200);
    const key = newKey();
    const mine = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("same"));
    // Another commit in between, so that the same body changes something again (else EMPTY_COMMIT).
    expect((await fx.client.post(`${fx.base}/commit`, commitBody("between"))).status).toBe(201);
    const theirs = await keyed(app.as(other), "POST", `${fx.base}/commit`, key, commitBody("same"));
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(replayed(theirs)).toBe(false);
    expect(commitResponse.parse(theirs.body).sequence).toBe(commitResponse.parse(mine.body).sequence + 2);
    expect(await commitsOf(fx)).toBe(3);
  });

  it.each([
    ["empty", ""],
    ["256 characters", "k".repeat(256)],
    ["not ASCII", "clé"],
  ])("refuses a key that is %s with 400 and does nothing", async (_name, key) => {
    const fx = await repoWithOwner(app);
    const res = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("VALIDATION_FAILED");
    expect(errorOf(res).error).toMatch(/Idempotency-Key/);
    expect(await commitsOf(fx)).toBe(0);
  });

  it("accepts a key of 255 printable characters", async () => {
    const fx = await repoWithOwner(app);
    const key = `${"~ !".repeat(85)}`;
    expect((await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"))).status).toBe(201);
    expect(
      (await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"))).headers.get(
        "idempotent-replayed",
      ),
    ).toBe("true");
  });

  it("ignores the key on a GET", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    expect((await keyed(fx.client, "GET", `${fx.base}/tree`, key)).status).toBe(200);
    expect((await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"))).status).toBe(201);
  });
});

describe("Idempotency-Key on every kind of mutation", () => {
  it("PUT, PATCH and DELETE replay their first answer", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    await createBranch(fx, "draft-one", true);
    await createBranch(fx, "gone");
    const who = `${fx.org}-reader@example.com`;
    const calls: [string, string, unknown][] = [
      ["PUT", `${fx.base}/roles/${who}`, { role: "reader" }],
      ["PATCH", `${fx.base}/branch/draft-one`, { draft: false }],
      ["DELETE", `${fx.base}/branch/gone`, undefined],
      ["DELETE", `${fx.base}/roles/${who}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const key = newKey();
      const first = await keyed(fx.client, method, path, key, body);
      expect(first.status, `${method} ${path}: ${JSON.stringify(first.body)}`).toBeLessThan(300);
      const again = await keyed(fx.client, method, path, key, body);
      expect([again.status, again.body, replayed(again)], `${method} ${path}`).toEqual([
        first.status,
        first.body,
        true,
      ]);
    }
    // The role delete was done once: a second delete without the key finds nothing to delete.
    expect((await fx.client.delete(`${fx.base}/roles/${who}`)).status).toBe(404);
  });

  it("a repo create replays, with its headers", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    const body = { owner: fx.org, name: `${fx.org}/second` };
    const first = await keyed(fx.client, "POST", "/repos", key, body);
    expect(first.status).toBe(201);
    const again = await keyed(fx.client, "POST", "/repos", key, body);
    expect([again.status, again.body]).toEqual([201, first.body]);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
  });

  it("a CI worker's claim: a retry gets the same job and claims no other", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    const [branch] = await app.sql<{ id: number }>("SELECT id FROM branches WHERE repo_id = $1", [fx.repoId]);
    for (const n of [1, 2])
      await enqueueJob(app.server.ctx.pool, {
        repoId: fx.repoId,
        branchId: branch!.id,
        sequence: 1,
        triggerType: "manual",
        triggerBranch: "main",
        triggerBaseBranch: null,
        triggerProposalId: null,
        triggerKey: `idem-${fx.repo}-${n}`,
        checks: ["test/check"],
        createdBy: fx.owner,
        now: clock.now(),
      });
    const worker = client(app.url, async () => WORKER_TOKEN);
    const key = newKey();
    const first = await keyed(worker, "POST", "/claim", key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await keyed(worker, "POST", "/claim", key);
    expect([again.status, replayed(again)]).toEqual([200, true]);
    expect(claimResponse.parse(again.body).id).toBe(claimResponse.parse(first.body).id);
    expect(await count("ci_jobs WHERE repo_id = $1 AND status = 'queued'", [fx.repoId])).toBe(1);
    // The worker's keys are its own: a person with the same key is another principal.
    const person = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expect(person.status).toBe(201);
    // Leave no queued job behind for the next test's claim.
    await app.sql("DELETE FROM ci_jobs WHERE repo_id = $1", [fx.repoId]);
  });

  it("a request token's heartbeat and a job token's check report replay", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    const { job, requestToken } = await queueAndClaim(app, fx.repo, "main", { createdBy: fx.owner });
    const runner = client(app.url, async () => requestToken);
    const key = newKey();
    const beat = await keyed(runner, "POST", `/jobs/${job.id}/heartbeat`, key);
    expect(beat.status, JSON.stringify(beat.body)).toBe(200);
    clock.advance(1000);
    const beatAgain = await keyed(runner, "POST", `/jobs/${job.id}/heartbeat`, key);
    expect([beatAgain.body, replayed(beatAgain)]).toEqual([beat.body, true]);
    const [row] = await app.sql<{ t: Date }>("SELECT last_heartbeat_at AS t FROM ci_jobs WHERE id = $1", [
      job.id,
    ]);
    expect(row!.t.toISOString()).toBe(heartbeatResponse.parse(beat.body).last_heartbeat_at);

    const jobClient = client(app.url, async () => mint(app as never, job));
    const report = { branch: "main", check_name: "test/check", status: "passed" };
    const reported = await keyed(jobClient, "POST", `${fx.base}/check`, key, report);
    expect(reported.status, JSON.stringify(reported.body)).toBe(201);
    const reportedAgain = await keyed(jobClient, "POST", `${fx.base}/check`, key, report);
    expect([reportedAgain.status, reportedAgain.body, replayed(reportedAgain)]).toEqual([
      201,
      reported.body,
      true,
    ]);
    await app.sql("DELETE FROM ci_jobs WHERE repo_id = $1", [fx.repoId]);
  });
});

describe("a lost response", () => {
  it("a client that drops the connection after sending gets the first answer on retry; the commit exists once", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    const body = JSON.stringify(commitBody("lost"));
    const token = await app.idp.token(fx.owner);
    const { port } = new URL(app.url);
    const socket = net.connect(Number(port), "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      [
        `POST ${fx.base}/commit HTTP/1.1`,
        "Host: 127.0.0.1",
        `Authorization: Bearer ${token}`,
        "Content-Type: application/json",
        `Content-Length: ${Buffer.byteLength(body)}`,
        `Idempotency-Key: ${key}`,
        "",
        body,
      ].join("\r\n"),
    );
    await new Promise<void>((resolve) => socket.end(resolve));
    socket.destroy();
    // The server finishes the work with nobody listening; wait until its answer is stored.
    for (let i = 0; ; i++) {
      const [row] = await app.sql<{ state: string }>("SELECT state FROM idempotency_keys WHERE key = $1", [
        key,
      ]);
      if (row?.state === "complete") break;
      expect(i, "the dropped request's answer is stored").toBeLessThan(400);
      await new Promise((r) => setTimeout(r, 25));
    }
    const retry = await keyed(fx.client, "POST", `${fx.base}/commit`, key, JSON.parse(body));
    expect([retry.status, replayed(retry)]).toEqual([201, true]);
    expect(retry.body).toMatchObject({ sequence: 1, message: "write lost" });
    expect(await commitsOf(fx)).toBe(1);
  });
});
