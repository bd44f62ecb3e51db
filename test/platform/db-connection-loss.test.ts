import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { commitResponse } from "../../shared/api/content.ts";
import { isDatabaseUnavailable } from "../../shared/db/pool.ts";
import { commit, type RepoFixture, repoWithOwner } from "../commits/fixtures.ts";
import { sse } from "../events/sse.ts";
import { freshDatabase, startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { freePort } from "../support/ports.ts";
import { errorOf } from "../support/world.ts";

/**
 * Losing the database mid-request answers 503 UNAVAILABLE (clients retry), never 500, whatever
 * shape the driver's error takes (docs/errors.md). The app's connections are killed for real with
 * pg_terminate_backend.
 */

/** A connection to the cluster's admin database, which outlives the app database's backends. */
async function adminClient(): Promise<pg.Client> {
  const admin = new pg.Client({ connectionString: inject("adminUrl") });
  await admin.connect();
  return admin;
}

/** Terminates every backend on `database` except `spare` and waits until they are gone. */
async function terminateBackends(admin: pg.Client, database: string, spare = 0): Promise<void> {
  const others = "datname = $1 AND pid <> $2 AND backend_type = 'client backend'";
  await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${others}`, [
    database,
    spare,
  ]);
  for (;;) {
    const { rows } = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE ${others}`, [database, spare]);
    if (rows.length === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("errors pg throws when a connection dies", () => {
  let admin: pg.Client;
  let url: string;
  beforeAll(async () => {
    admin = await adminClient();
    url = await freshDatabase();
  });
  afterAll(() => admin.end());

  const failureOf = (p: Promise<unknown>) =>
    p.then(
      () => expect.unreachable("the query succeeded"),
      (err: unknown) => err,
    );
  const database = () => new URL(url).pathname.slice(1);

  it("every error of a client whose backend was terminated counts as unavailable", async () => {
    const client = new pg.Client({ connectionString: url });
    const ended = new Promise((resolve) => client.once("end", resolve));
    client.on("error", () => {});
    await client.connect();
    await terminateBackends(
      admin,
      database(),
      Number((await admin.query("SELECT pg_backend_pid() AS p")).rows[0].p),
    );
    await ended;
    const notQueryable = await failureOf(client.query("SELECT 1"));
    expect((notQueryable as Error).message).toMatch(/not queryable/);
    expect(isDatabaseUnavailable(notQueryable)).toBe(true);
    await client.end().catch(() => {});
    const closed = await failureOf(client.query("SELECT 1"));
    expect((closed as Error).message).toMatch(/not queryable/);
    expect(isDatabaseUnavailable(closed)).toBe(true);
  });

  it("a query running when its backend is terminated fails with an unavailable error", async () => {
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    await client.connect();
    const running = failureOf(client.query("SELECT pg_sleep(30)"));
    const pid = (await admin.query("SELECT pg_backend_pid() AS p")).rows[0].p;
    await terminateBackends(admin, database(), Number(pid));
    expect(isDatabaseUnavailable(await running)).toBe(true);
    await client.end().catch(() => {});
  });

  it("a pool with no free client within its connect timeout, a refused connection, an ended pool", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 300 });
    const held = await pool.connect();
    const timeout = await failureOf(pool.query("SELECT 1"));
    expect((timeout as Error).message).toMatch(/timeout exceeded when trying to connect|connection timeout/);
    expect(isDatabaseUnavailable(timeout)).toBe(true);
    held.release();
    await pool.end();
    expect(isDatabaseUnavailable(await failureOf(pool.query("SELECT 1")))).toBe(true);
    const refused = new pg.Client({ host: "127.0.0.1", port: await freePort(), user: "x", database: "x" });
    expect(isDatabaseUnavailable(await failureOf(refused.connect()))).toBe(true);
  });

  it("an error caused by one of them counts too, and a wrong query does not", () => {
    const lost = new Error("Connection terminated unexpectedly");
    expect(isDatabaseUnavailable(new Error("reading the branch failed", { cause: lost }))).toBe(true);
    expect(
      isDatabaseUnavailable(new AggregateError([Object.assign(new Error("x"), { code: "EPIPE" })])),
    ).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("syntax error"), { code: "42601" }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error("bad byte"), { code: "22021" }))).toBe(false);
  });
});

describe("the app losing its database connections mid-request", () => {
  let app: TestApp;
  let fx: RepoFixture;
  let admin: pg.Client;
  let database: string;
  beforeAll(async () => {
    app = await startTestApp();
    fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "one" });
    admin = await adminClient();
    database = new URL(app.databaseUrl).pathname.slice(1);
  });
  afterAll(async () => {
    await admin.end();
    await app.close();
  });

  const postCommit = (text: string) =>
    fx.client.post(`${fx.base}/commit`, {
      branch: "main",
      message: text,
      files: [{ path: "a.md", content: b64(text) }],
    });

  it("answers 503 when the connection dies between two queries of a transaction (not queryable)", async () => {
    const gate = app.server.ctx.commitGroups.gate;
    const original = gate.enter.bind(gate);
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The commit's transaction has begun; it waits here for its group's turn, between queries.
    gate.enter = async (key) => {
      entered();
      await released;
      return original(key);
    };
    try {
      const res = postCommit("two");
      await inside;
      const spare = Number((await admin.query("SELECT pg_backend_pid() AS p")).rows[0].p);
      await terminateBackends(admin, database, spare);
      await new Promise((r) => setTimeout(r, 50)); // let the app's client read the end of its socket
      release();
      const answer = await res;
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(answer.body).toEqual({ code: "UNAVAILABLE", error: expect.any(String) });
    } finally {
      gate.enter = original;
    }
    expect((await postCommit("three")).status).toBe(201);
  });

  it("answers 503 when the connection dies while the request waits on a lock", async () => {
    const holder = new pg.Client({ connectionString: app.databaseUrl });
    holder.on("error", () => {}); // a later test's terminations must not surface as uncaught errors
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE branches IN ACCESS EXCLUSIVE MODE");
      const holderPid = Number((await holder.query("SELECT pg_backend_pid() AS p")).rows[0].p);
      let settled = false;
      const res = postCommit("four").finally(() => {
        settled = true;
      });
      // Every backend queued behind the holder's lock is killed until the commit answers. Killing
      // only the first one seen is not enough: a background query of the app (webhook delivery,
      // the event relay) may queue first, and the commit would then wait on a fresh connection
      // behind a lock that is never released. The commit cannot succeed while the lock is held.
      while (!settled) {
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND $2 = ANY(pg_blocking_pids(pid))",
          [database, holderPid],
        );
        await new Promise((r) => setTimeout(r, 20));
      }
      const answer = await res;
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(errorOf(answer).code).toBe("UNAVAILABLE");
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
    }
    expect((await postCommit("five")).status).toBe(201);
  });

  it("keeps serving, and its open event streams keep delivering, after every connection died", async () => {
    const stream = await sse(app, `/repos/${fx.repo}/-/events`, fx.owner);
    try {
      expect(stream.status).toBe(200);
      const spare = Number((await admin.query("SELECT pg_backend_pid() AS p")).rows[0].p);
      await terminateBackends(admin, database, spare);
      // A request may meet a connection that died an instant ago: that one is a 503, never a 500.
      let answer = await postCommit("after the outage");
      for (let i = 0; answer.status === 503 && i < 5; i++) answer = await postCommit("after the outage");
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      const events = await stream.waitForEvents(1, 10_000);
      expect(
        events.some((e) => e.envelope.data.sequence === commitResponse.parse(answer.body).sequence),
      ).toBe(true);
    } finally {
      stream.close();
    }
  });
});
