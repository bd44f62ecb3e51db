import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ADMIN, startTestApp } from "../support/app.ts";
import { commit, repoWithOwner, useFixture } from "../support/world.ts";
import { commitEvents, type SseClient, sleep, streams } from "./sse.ts";

/** Last-Event-ID: what a reconnecting client missed comes from the log; a gap notice when the log lost it; retention. */

const messageOf = (s: SseClient) => commitEvents(s).map((e) => e.envelope.data.message as string);

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
const stream = streams(app, { ok: true });

describe("Last-Event-ID", () => {
  it("replays what the client missed, then continues live, with no repeat and no gap", async () => {
    const first = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    for (const n of [1, 2, 3]) await commit(fx, "main", { "a.md": `v${n}` }, `m${n}`);
    await first.until((c) => commitEvents(c).length >= 3, 10_000, "3 commits");
    const seen = commitEvents(first);
    first.close();
    for (const n of [4, 5, 6]) await commit(fx, "main", { "a.md": `v${n}` }, `m${n}`);
    const again = await stream(`/repos/${fx.repo}/-/events`, fx.owner, { "last-event-id": seen[2]!.id });
    await again.until((c) => commitEvents(c).length >= 3, 10_000, "3 commits");
    for (const n of [7, 8]) await commit(fx, "main", { "a.md": `v${n}` }, `m${n}`);
    await again.until((c) => commitEvents(c).length >= 5, 10_000, "5 commits");
    await sleep(100);
    expect(messageOf(again)).toEqual(["m4", "m5", "m6", "m7", "m8"]);
    const ids = again.events().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(again.messages.some((m) => m.event === "gap")).toBe(false);
  });

  it("resumes with the filters of the new request, and accepts the id as the last_event_id query parameter", async () => {
    const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "b.md": "x" }, "before");
    const [mark] = await s.waitForEvents(1);
    s.close();
    await fx.client.post(`${fx.base}/branch`, { name: `resume-${randomUUID().slice(0, 8)}` });
    await commit(fx, "main", { "b.md": "y" }, "missed");
    const resumed = await stream(
      `/repos/${fx.repo}/-/events?types=com.svc.commit.created&last_event_id=${mark!.id}`,
      fx.owner,
    );
    await resumed.waitForEvents(1);
    await sleep(200);
    expect(resumed.events().map((e) => e.envelope.type)).toEqual(["com.svc.commit.created"]);
    expect(messageOf(resumed)).toEqual(["missed"]);
  });

  it("has no gap and no repeat while events keep coming during the replay", async () => {
    const s = await stream("/events", ADMIN);
    await commit(fx, "main", { "c.md": "0" }, "c0");
    const [mark] = await s.waitForEvents(1);
    s.close();
    for (let n = 1; n <= 30; n++) await commit(fx, "main", { "c.md": `${n}` }, `c${n}`);
    // Resume while 30 more commits run concurrently with the replay.
    const writer = (async () => {
      for (let n = 31; n <= 60; n++) await commit(fx, "main", { "c.md": `${n}` }, `c${n}`);
    })();
    const resumed = await stream("/events", ADMIN, { "last-event-id": mark!.id });
    await writer;
    await resumed.waitForEvents(60, 15_000);
    await sleep(200);
    expect(messageOf(resumed)).toEqual(Array.from({ length: 60 }, (_, i) => `c${i + 1}`));
    const cursors = resumed.events().map((e) => e.id.split(".").map(BigInt) as [bigint, bigint]);
    for (let i = 1; i < cursors.length; i++) {
      const [a, b] = [cursors[i - 1]!, cursors[i]!];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])).toBe(true);
    }
  });
});

describe("retention and the gap notice", () => {
  it("deletes events past retention, but keeps those a webhook delivery still needs", async () => {
    const other = await repoWithOwner(app);
    // An undelivered webhook outbox row for one event: its subscription is suspended, so its rows
    // are held (never leased by the webhook worker), and it wants a type this test never emits.
    const subscription = randomUUID();
    await app.sql(
      `INSERT INTO subscriptions (id, event_types, backend, url, created_by, suspended_at)
       VALUES ($1, ARRAY['com.svc.org.deleted'], 'webhook', 'http://127.0.0.1:9/hook', $2, now())`,
      [subscription, ADMIN],
    );
    await commit(other, "main", { "x.md": "pending delivery" }, "pending");
    await app.sql(
      `INSERT INTO webhook_outbox (subscription_id, event_id)
       SELECT $1, id FROM events WHERE data->>'message' = 'pending'`,
      [subscription],
    );
    await commit(fx, "main", { "x.md": "old" }, "old");
    await app.sql(
      "UPDATE events SET time = now() - interval '8 days' WHERE data->>'message' IN ('pending', 'old')",
    );
    const deleted = await app.server.ctx.events.cleanup();
    expect(deleted).toBeGreaterThanOrEqual(1);
    const left = await app.sql<{ message: string }>(
      "SELECT data->>'message' AS message FROM events WHERE data->>'message' IN ('pending', 'old')",
    );
    expect(left).toEqual([{ message: "pending" }]);
    // Once delivered, it goes too.
    await app.sql("UPDATE webhook_outbox SET delivered_at = now()");
    await app.server.ctx.events.cleanup();
    expect(await app.sql("SELECT 1 FROM events WHERE data->>'message' = 'pending'")).toEqual([]);
  });

  it("tells a client whose Last-Event-ID the log no longer has that events were lost, then continues", async () => {
    const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "g.md": "1" }, "g1");
    await commit(fx, "main", { "g.md": "2" }, "g2");
    const [g1] = await s.waitForEvents(2);
    s.close();
    await commit(fx, "main", { "g.md": "3" }, "g3");
    await app.sql(
      "UPDATE events SET time = now() - interval '30 days' WHERE data->>'message' IN ('g1', 'g2')",
    );
    await app.server.ctx.events.cleanup();
    const resumed = await stream(`/repos/${fx.repo}/-/events`, fx.owner, { "last-event-id": g1!.id });
    await resumed.until((c) => c.messages.some((m) => m.event === "gap"), 5_000, "the gap notice");
    const gap = resumed.messages.find((m) => m.event === "gap")!;
    expect(gap.id).toBeUndefined();
    expect(JSON.parse(gap.data!)).toMatchObject({ last_event_id: g1!.id, retention_days: 7 });
    // What is still kept follows (g3), then live events.
    await resumed.waitForEvents(1);
    await commit(fx, "main", { "g.md": "4" }, "g4");
    await resumed.waitForEvents(2);
    expect(messageOf(resumed)).toEqual(["g3", "g4"]);
    const gapIndex = resumed.messages.indexOf(gap);
    expect(resumed.messages.findIndex((m) => m.data?.includes('"g3"'))).toBeGreaterThan(gapIndex);
  });

  it("sends the gap notice too when the client's last event is itself older than the retention period", async () => {
    const s = await stream(`/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "h.md": "1" }, "h1");
    const [h1] = await s.waitForEvents(1);
    s.close();
    // Kept (for instance for a pending webhook), but past retention: events after it may be gone.
    await app.sql("UPDATE events SET time = now() - interval '8 days' WHERE data->>'message' = 'h1'");
    const resumed = await stream(`/repos/${fx.repo}/-/events`, fx.owner, { "last-event-id": h1!.id });
    await resumed.until((c) => c.messages.some((m) => m.event === "gap"), 5_000, "the gap notice");
  });

  it("an id this log never reached gets the gap notice and then live events", async () => {
    const resumed = await stream(`/repos/${fx.repo}/-/events`, fx.owner, {
      "last-event-id": "999999999.999999999",
    });
    await resumed.until((c) => c.messages.some((m) => m.event === "gap"), 5_000, "the gap notice");
    await commit(fx, "main", { "i.md": "1" }, "i1");
    await resumed.waitForEvents(1);
    expect(messageOf(resumed)).toEqual(["i1"]);
  });
});
