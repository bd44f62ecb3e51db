import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitResponse } from "../../shared/api/content.ts";
import { ManualClock } from "../../shared/clock.ts";
import { withTx } from "../../shared/db/tx.ts";
import { DomainError } from "../../shared/errors.ts";
import { errorReply } from "../../shared/http/dispatch.ts";
import { idempotently } from "../../shared/http/idempotency.ts";
import { runHolding } from "../../shared/idempotency/scope.ts";
import { sweepExpiredKeys } from "../../shared/idempotency/store.ts";
import { type RepoFixture, repoWithOwner } from "../commits/fixtures.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { expectError } from "../support/world.ts";
import { commitBody, counter, keyed, newKey, replayed } from "./idempotency-support.ts";

// The failure windows of safe retries (docs/api.md "Safe retries"): crashes are simulated by
// seeding the key's row as a dead request would have left it.

let app: TestApp;
let clock: ManualClock;
let count: ReturnType<typeof counter>["count"];
let commitsOf: ReturnType<typeof counter>["commitsOf"];
beforeAll(async () => {
  clock = new ManualClock(new Date());
  app = await startTestApp({}, { context: { clock } });
  ({ count, commitsOf } = counter(app));
});
afterAll(() => app.close());

describe("the failure windows", () => {
  const seed = async (fx: RepoFixture, key: string, state: string, age: number, body: unknown) => {
    const path = `${fx.base}/commit`;
    await app.sql(
      `INSERT INTO idempotency_keys (identity, key, method, path, body_sha256, state, lease, created_at, status)
       VALUES ($1, $2, 'POST', $3, sha256(convert_to($4, 'UTF8')), $5, gen_random_uuid(), $6, $7)`,
      [
        fx.owner,
        key,
        path,
        JSON.stringify(body),
        state,
        new Date(clock.now().getTime() - age),
        state === "complete" ? 201 : null,
      ],
    );
  };

  it("a key held by a request in flight answers 409 IDEMPOTENCY_IN_PROGRESS with Retry-After", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    await seed(fx, key, "in_progress", 1000, commitBody("x"));
    const res = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expectError(res, 409, "IDEMPOTENCY_IN_PROGRESS");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await commitsOf(fx)).toBe(0);
  });

  it("a key abandoned in progress (its holder died before committing anything) is retaken after a minute", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    await seed(fx, key, "in_progress", 61_000, commitBody("x"));
    const res = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expect([res.status, replayed(res)]).toEqual([201, false]);
    expect(await commitsOf(fx)).toBe(1);
  });

  it("a key whose work committed a moment ago, answer not yet stored, is still in progress", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    await seed(fx, key, "applied", 1000, commitBody("x"));
    const res = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expectError(res, 409, "IDEMPOTENCY_IN_PROGRESS");
  });

  it("a key whose work committed but whose answer was lost is never done again: 409 IDEMPOTENCY_ANSWER_LOST", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    await seed(fx, key, "applied", 61_000, commitBody("x"));
    const res = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expectError(res, 409, "IDEMPOTENCY_ANSWER_LOST");
    expect(await commitsOf(fx)).toBe(0);
  });

  it("the key is marked applied in the mutation's own transaction: a holder that lost its key rolls back", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    await seed(fx, key, "in_progress", 0, commitBody("x"));
    const lost = {
      identity: fx.owner,
      key,
      lease: "00000000-0000-4000-8000-000000000000",
      open: true,
      applied: false,
    };
    const work = runHolding(lost, () =>
      withTx(app.server.ctx.pool, (tx) =>
        tx.query("UPDATE branches SET updated_at = '2000-01-01Z' WHERE repo_id = $1", [fx.repoId]),
      ),
    );
    await expect(work).rejects.toSatisfy(
      (e) => e instanceof DomainError && e.code === "IDEMPOTENCY_IN_PROGRESS",
    );
    expect(await count("branches WHERE repo_id = $1 AND updated_at = '2000-01-01Z'", [fx.repoId])).toBe(0);
  });

  it("a request's transaction leaves its key applied before the answer is stored", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    await seed(fx, key, "in_progress", 0, commitBody("x"));
    const [row] = await app.sql<{ lease: string }>(
      "SELECT lease::text FROM idempotency_keys WHERE key = $1",
      [key],
    );
    const mine = { identity: fx.owner, key, lease: row!.lease, open: true, applied: false };
    await runHolding(mine, () =>
      withTx(app.server.ctx.pool, (tx) =>
        tx.query("UPDATE branches SET updated_at = '2000-01-01Z' WHERE repo_id = $1", [fx.repoId]),
      ),
    );
    expect(mine.applied).toBe(true);
    expect(await count("idempotency_keys WHERE key = $1 AND state = 'applied'", [key])).toBe(1);
  });
});

describe("a 5xx", () => {
  // A server fault cannot be provoked over HTTP on demand, so these call the dispatcher's hook.
  const request = (key: string) => ({
    method: "POST",
    url: "/anything",
    headers: { "idempotency-key": key },
    body: Buffer.from("{}"),
    principal: "fault@example.com",
    refuse: (err: DomainError) => errorReply(err, "test"),
  });
  const stateOf = async (key: string) =>
    (await app.sql<{ state: string }>("SELECT state FROM idempotency_keys WHERE key = $1", [key]))[0]?.state;

  it("is not kept: a fault before anything committed lets the key go, so a retry does the work", async () => {
    const key = newKey();
    const ctx = app.server.ctx;
    await expect(
      idempotently(ctx, request(key), async () => Promise.reject(new Error("boom"))),
    ).rejects.toThrow("boom");
    expect(await stateOf(key)).toBeUndefined();
    const retry = await idempotently(ctx, request(key), async () => ({ status: 201, body: { done: true } }));
    expect(retry).toEqual({ status: 201, body: { done: true } });
    expect(await stateOf(key)).toBe("complete");
  });

  it("after part of the work committed, keeps the key applied: the work is never done again", async () => {
    const key = newKey();
    const ctx = app.server.ctx;
    const work = async () => {
      await withTx(ctx.pool, (tx) => tx.query("SELECT 1"));
      throw new Error("boom after commit");
    };
    await expect(idempotently(ctx, request(key), work)).rejects.toThrow("boom after commit");
    expect(await stateOf(key)).toBe("applied");
    let ran = false;
    const retry = await idempotently(ctx, request(key), async () => {
      ran = true;
      return { status: 201 };
    });
    expect([retry.status, ran]).toEqual([409, false]);
  });
});

describe("after 24 hours", () => {
  it("a key is forgotten: the same request is done again, and the sweep deletes expired keys", async () => {
    const fx = await repoWithOwner(app);
    const key = newKey();
    const first = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    clock.advance(24 * 3600_000 - 1000);
    const within = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expect([within.body, replayed(within)]).toEqual([first.body, true]);
    clock.advance(2000);
    // Another commit in between, so that the same body changes something again (else EMPTY_COMMIT).
    expect((await fx.client.post(`${fx.base}/commit`, commitBody("between"))).status).toBe(201);
    const after = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody("x"));
    expect([after.status, replayed(after)]).toEqual([201, false]);
    expect(commitResponse.parse(after.body).sequence).toBe(commitResponse.parse(first.body).sequence + 2);
    expect(await commitsOf(fx)).toBe(3);
    // The retry started the key over; every other key of this file is now older than a day.
    clock.advance(1000);
    await sweepExpiredKeys(app.server.ctx.pool, clock.now());
    const left = await app.sql<{ key: string }>("SELECT key FROM idempotency_keys");
    expect(left.map((r) => r.key)).toEqual([key]);
  });
});
