import pg from "pg";
import { describe, expect, it } from "vitest";
import { errorBody } from "../../shared/http/responses.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { commit, repoWithOwner, useFixture } from "../support/world.ts";
import { secondInstance } from "./instances.ts";
import { sleep, streams } from "./sse.ts";

/** The SSE endpoints over real HTTP: access at open, filters, keepalive, idle, disconnects, the listener. */

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
const stream = streams(app);

describe("access when the stream opens", () => {
  it("a repo stream needs a reader: 401 anonymous, 404 for one who may not read it, 200 for a reader", async () => {
    const anon = await stream(`/repos/${fx.repo}/-/events`, null);
    expect(anon.status).toBe(401);
    expect(errorBody.parse(anon.body).code).toBe("UNAUTHENTICATED");
    const stranger = await stream(`/repos/${fx.repo}/-/events`, "stranger@example.com");
    expect(stranger.status).toBe(404);
    expect(errorBody.parse(stranger.body).code).toBe("REPO_NOT_FOUND");
    const missing = await stream(`/repos/${fx.org}/nope/-/events`, fx.owner);
    expect(missing.status).toBe(404);
    expect((await fx.client.put(`${fx.base}/roles/reader@example.com`, { role: "reader" })).status).toBe(200);
    const reader = await stream(`/repos/${fx.repo}/-/events`, "reader@example.com");
    expect(reader.status).toBe(200);
    expect(reader.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(reader.headers["cache-control"]).toContain("no-cache");
    expect(reader.headers["x-accel-buffering"]).toBe("no");
    reader.close();
  });

  it("the global stream is for global admins: 401 anonymous, 403 for a repo admin, 200 for a global admin", async () => {
    expect((await stream("/events", null)).status).toBe(401);
    const owner = await stream("/events", fx.owner);
    expect(owner.status).toBe(403);
    expect(errorBody.parse(owner.body).code).toBe("FORBIDDEN");
    const admin = await stream("/events", ADMIN);
    expect(admin.status).toBe(200);
    admin.close();
  });

  it("refuses an unknown event type and a malformed Last-Event-ID with 400", async () => {
    const bad = await stream(
      `/repos/${fx.repo}/-/events?types=com.svc.commit.created,com.svc.nope`,
      fx.owner,
    );
    expect(bad.status).toBe(400);
    expect(errorBody.parse(bad.body).code).toBe("VALIDATION_FAILED");
    expect(errorBody.parse(bad.body).error).toContain("com.svc.nope");
    const badId = await stream(`/repos/${fx.repo}/-/events`, fx.owner, { "last-event-id": "yesterday" });
    expect(badId.status).toBe(400);
    expect(errorBody.parse(badId.body).code).toBe("VALIDATION_FAILED");
  });
});

describe("where a new stream starts", () => {
  it("sends no event of a transaction that ended before it connected, while a long one runs", async () => {
    // A transaction left open holds the snapshot's horizon behind both commits (as one would in
    // any database of the server); only the commit made after the stream opened is new to it.
    const held = new pg.Client({ connectionString: app.databaseUrl });
    await held.connect();
    try {
      await held.query("BEGIN");
      await held.query("SELECT pg_current_xact_id()");
      await commit(fx, "main", { "before.md": "before" }, "before the stream");
      const s = await stream(`/repos/${fx.repo}/-/events?types=com.svc.commit.created`, fx.owner);
      await commit(fx, "main", { "after.md": "after" }, "after the stream opened");
      await held.query("ROLLBACK");
      await s.waitForEvents(1);
      await sleep(100);
      expect(s.events().map((e) => e.envelope.data.message)).toEqual(["after the stream opened"]);
      s.close();
    } finally {
      await held.end();
    }
  });
});

describe("filters", () => {
  it("a repo stream carries only its repo's events, and with `types` only those types", async () => {
    const other = await repoWithOwner(app);
    const all = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    const commits = await stream(`/repos/${fx.repo}/-/events?types=com.svc.commit.created`, fx.owner);
    const two = await stream(
      `/repos/${fx.repo}/-/events?types=com.svc.branch.created,com.svc.commit.created`,
      fx.owner,
    );
    await commit(other, "main", { "x.md": "elsewhere" });
    await fx.client.post(`${fx.base}/branch`, { name: "filtered" });
    await commit(fx, "main", { "a.md": "here" });
    await all.waitForEvents(2);
    await commits.waitForEvents(1);
    await two.waitForEvents(2);
    await commit(fx, "filtered", { "b.md": "on the branch" });
    await all.waitForEvents(3);
    await sleep(100);
    expect(all.events().map((e) => e.envelope.type)).toEqual([
      "com.svc.branch.created",
      "com.svc.commit.created",
      "com.svc.commit.created",
    ]);
    expect(all.events().every((e) => e.envelope.data.repo === fx.repo)).toBe(true);
    expect(commits.events().map((e) => e.envelope.data.branch)).toEqual(["main", "filtered"]);
    expect(two.events().map((e) => e.envelope.type)).toEqual(all.events().map((e) => e.envelope.type));
  });

  it("the global stream carries every event (org events too), and with `repo` only that repo's", async () => {
    const everything = await stream("/events", ADMIN);
    const one = await stream(`/events?repo=${encodeURIComponent(fx.repo)}`, ADMIN);
    const other = await repoWithOwner(app); // org.created, repo.created elsewhere
    await commit(fx, "main", { "c.md": "global" });
    await everything.waitForEvents(3);
    await one.waitForEvents(1);
    await sleep(100);
    expect(everything.events().map((e) => e.envelope.type)).toEqual([
      "com.svc.org.created",
      "com.svc.repo.created",
      "com.svc.commit.created",
    ]);
    expect(everything.events()[0]!.envelope.data.org).toBe(other.org);
    expect(one.events().map((e) => e.envelope.type)).toEqual(["com.svc.commit.created"]);
  });

  it("each event is one message: an id line (the cursor) and one data line with the envelope", async () => {
    const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "d.md": "wire" });
    const [event] = await s.waitForEvents(1);
    expect(event!.id).toMatch(/^\d+\.\d+$/);
    const msg = s.messages.find((m) => m.data !== undefined)!;
    expect(Object.keys(msg).sort()).toEqual(["at", "data", "id"]);
    expect(msg.data!.includes("\n")).toBe(false);
    expect(JSON.parse(msg.data!)).toMatchObject({ data: { message: "change on main" } });
  });
});

describe("keepalive and idle", () => {
  it("sends `: keepalive` on the hub's interval and keeps an idle stream open", async () => {
    app.server.ctx.events.tune({ keepaliveMs: 150 });
    try {
      const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
      await s.until(
        (c) => c.messages.filter((m) => m.comment === "keepalive").length >= 3,
        5_000,
        "keepalives",
      );
      await sleep(1_000); // idle: nothing but keepalives
      expect(s.isEnded()).toBe(false);
      await commit(fx, "main", { "e.md": "after idling" });
      await s.waitForEvents(1);
    } finally {
      app.server.ctx.events.tune({ keepaliveMs: 15_000 });
    }
  });

  it("the default interval is 15 seconds, as the spec says", async () => {
    const { defaultHubOptions } = await import("../../shared/events/hub.ts");
    expect(defaultHubOptions.keepaliveMs).toBe(15_000);
  });
});

describe("lifecycle", () => {
  it("a client that disconnects is forgotten by the hub", async () => {
    const hub = app.server.ctx.events;
    const before = hub.clients;
    const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    await s.until((c) => c.messages.length > 0, 5_000, "the opening comment");
    expect(hub.clients).toBe(before + 1);
    s.close();
    const deadline = Date.now() + 5_000;
    while (hub.clients !== before && Date.now() < deadline) await sleep(20);
    expect(hub.clients).toBe(before);
  });

  it("closing the server ends its streams promptly", async () => {
    const other = await secondInstance(app);
    const token = await app.idp.token(fx.owner);
    const { openSse } = await import("./sse.ts");
    const s = await openSse(other.url, `/repos/${fx.repo}/-/events`, { token });
    expect(s.status).toBe(200);
    const started = performance.now();
    await other.close();
    await s.ended;
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("a dropped LISTEN connection is re-opened, and events committed meanwhile still arrive", async () => {
    const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    const killed = await app.sql<{ ok: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'quire-sse-hub' AND datname = current_database()",
    );
    expect(killed.length).toBe(1);
    const seq = await commit(fx, "main", { "f.md": "while the listener was down" });
    const [event] = await s.waitForEvents(1, 10_000);
    expect(event!.envelope.data.sequence).toBe(seq);
    await app.sql("SELECT 1"); // the listener is back:
    const deadline = Date.now() + 5_000;
    let back = 0;
    while (back === 0 && Date.now() < deadline) {
      back = (
        await app.sql(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = 'quire-sse-hub' AND datname = current_database()",
        )
      ).length;
      await sleep(50);
    }
    expect(back).toBe(1);
  });

  it("an event whose NOTIFY never came is delivered by the sweep", async () => {
    const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    // Written straight into the log: no transaction of Quire's, so no NOTIFY.
    await app.sql(
      `INSERT INTO events (id, type, source, repo, time, data)
       VALUES (gen_random_uuid(), 'com.svc.branch.abandoned', $1, $2, now(), $3::jsonb)`,
      [`/repos/${fx.repo}`, fx.repo, JSON.stringify({ repo: fx.repo, branch: "swept", abandoned_by: "sql" })],
    );
    const started = performance.now();
    const [event] = await s.waitForEvents(1, 5_000);
    expect(event!.envelope.data.branch).toBe("swept");
    expect(performance.now() - started).toBeLessThan(2_500);
  });
});
