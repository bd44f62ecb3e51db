import { describe, expect, it } from "vitest";
import { backoffSeconds, MAX_ATTEMPTS } from "../../shared/webhooks/outbox.ts";
import { api, okBody } from "../support/api.ts";
import { commit, repoWithOwner, useFixture } from "../support/world.ts";
import { outboxOf, startReceiver, startWebhookApp, subscribe, subscriptionRow } from "./support.ts";

/**
 * Time-dependent delivery on a manual clock: the backoff schedule, suspension after 10 failed
 * attempts, holding while suspended, resume, and retention. Nothing here sleeps for time to pass.
 */

const app = useFixture(startWebhookApp);
const rx = useFixture(startReceiver);
const fx = useFixture(() => repoWithOwner(app as never));

const SECOND = 1000;

describe("backoff", () => {
  it("is 1 s doubling per failed attempt, capped at one hour", () => {
    const schedule = Array.from({ length: 16 }, (_, i) => backoffSeconds(i + 1));
    expect(schedule).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600, 3600, 3600]);
    expect(backoffSeconds(100)).toBe(3600);
  });
});

describe("a receiver that keeps failing", () => {
  it("is retried on the backoff schedule, to the millisecond, and suspended after the 10th failure", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/failing") });
    rx.set({ kind: "status", status: 503 });
    await commit(fx, "main", { "a.md": "1" }, "event 1");
    await app.webhooks.drain();
    expect(rx.at("/failing")).toHaveLength(1);

    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const [row] = await outboxOf(app, sub.id);
      const wait = backoffSeconds(attempt) * SECOND;
      expect(row!.attempts).toBe(attempt);
      expect(row!.next_attempt_at.getTime() - app.clock.now().getTime()).toBe(wait);
      app.clock.advance(wait - 1);
      await app.webhooks.drain();
      expect(rx.at("/failing"), `not due 1 ms before retry ${attempt}`).toHaveLength(attempt);
      app.clock.advance(1);
      await app.webhooks.drain();
      expect(rx.at("/failing"), `retry ${attempt} when due`).toHaveLength(attempt + 1);
    }

    // The 10th failure suspended the subscription, in the transaction that recorded it.
    const [row] = await outboxOf(app, sub.id);
    expect(row).toMatchObject({ attempts: MAX_ATTEMPTS, delivered_at: null, last_status: 503 });
    const state = await subscriptionRow(app, sub.id);
    expect(state.failure_count).toBe(1);
    expect(state.suspended_at).toEqual(app.clock.now());
    const listed = okBody(await api(fx.client).get("/subscriptions")).subscriptions.find(
      (s) => s.id === sub.id,
    );
    expect(listed).toMatchObject({ failure_count: 1, suspended_at: app.clock.now().toISOString() });

    // Suspended: nothing more is sent, neither that row when its time comes nor new events.
    rx.set({ kind: "ok" });
    app.clock.advance(3600 * SECOND);
    await commit(fx, "main", { "a.md": "2" }, "event 2");
    await commit(fx, "main", { "a.md": "3" }, "event 3");
    await app.webhooks.drain();
    app.clock.advance(3600 * SECOND);
    await app.webhooks.drain();
    expect(rx.at("/failing")).toHaveLength(MAX_ATTEMPTS);
    const held = await outboxOf(app, sub.id);
    expect(held.map((r) => [r.attempts, r.delivered_at])).toEqual([
      [MAX_ATTEMPTS, null],
      [0, null],
      [0, null],
    ]);

    // Resume: cleared, count reset, and everything held is delivered at once, in event order,
    // the exhausted row first. No event is lost.
    expect((await fx.client.post(`/subscriptions/${sub.id}/resume`)).status).toBe(204);
    expect(await subscriptionRow(app, sub.id)).toEqual({ failure_count: 0, suspended_at: null });
    await app.webhooks.drain();
    const after = rx.at("/failing").slice(MAX_ATTEMPTS);
    expect(after.map((r) => r.body.data["message"])).toEqual(["event 1", "event 2", "event 3"]);
    expect(after.map((r) => r.body.id)).toEqual(held.map((r) => r.event_id));
    const done = await outboxOf(app, sub.id);
    expect(done.every((r) => r.delivered_at !== null && r.attempts === 1)).toBe(true);
  });

  it("resume delivers without being driven: the API wakes the worker", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/woken") });
    await app.sql(
      "UPDATE subscriptions SET suspended_at = $2, failure_count = failure_count + 1 WHERE id = $1",
      [sub.id, app.clock.now()],
    );
    await commit(fx, "main", { "w.md": "1" }, "while suspended");
    await app.webhooks.drain();
    expect(rx.at("/woken")).toHaveLength(0);
    expect((await fx.client.post(`/subscriptions/${sub.id}/resume`)).status).toBe(204);
    const [got] = await rx.waitFor(1, "/woken"); // no drain(): the worker was woken by the resume
    expect(got!.body.data["message"]).toBe("while suspended");
  });

  it("resuming a subscription that is not suspended changes nothing", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/active") });
    rx.set({ kind: "status", status: 500 });
    await commit(fx, "main", { "x.md": "1" });
    await app.webhooks.drain();
    rx.set({ kind: "ok" });
    const before = await outboxOf(app, sub.id);
    expect((await fx.client.post(`/subscriptions/${sub.id}/resume`)).status).toBe(204);
    expect(await outboxOf(app, sub.id)).toEqual(before);
    expect(await subscriptionRow(app, sub.id)).toEqual({ failure_count: 0, suspended_at: null });
    await app.sql("DELETE FROM subscriptions WHERE id = $1", [sub.id]);
  });

  it("a row that succeeds on a retry is delivered once and stops being retried", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/recovers") });
    rx.set({ kind: "status", status: 500 });
    await commit(fx, "main", { "r.md": "1" });
    await app.webhooks.drain();
    app.clock.advance(SECOND);
    await app.webhooks.drain();
    rx.set({ kind: "ok" });
    app.clock.advance(2 * SECOND);
    await app.webhooks.drain();
    app.clock.advance(3600 * SECOND);
    await app.webhooks.drain();
    expect(rx.at("/recovers")).toHaveLength(3);
    const [row] = await outboxOf(app, sub.id);
    expect(row).toMatchObject({ attempts: 3, last_status: 200, last_error: null });
    expect(await subscriptionRow(app, sub.id)).toEqual({ failure_count: 0, suspended_at: null });
  });
});

describe("retention", () => {
  it("deletes delivered rows 7 days after delivery, and never undelivered ones", async () => {
    const delivered = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/kept") });
    const pending = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/pending") });
    await app.sql("UPDATE subscriptions SET suspended_at = $2 WHERE id = $1", [pending.id, app.clock.now()]);
    await commit(fx, "main", { "k.md": "1" });
    await app.webhooks.drain();
    const [row] = await outboxOf(app, delivered.id);
    expect(row!.delivered_at).toEqual(app.clock.now());
    const week = 7 * 24 * 3600 * SECOND;

    app.clock.advance(week);
    await app.webhooks.cleanup();
    expect(await outboxOf(app, delivered.id), "exactly 7 days: still kept").toHaveLength(1);

    app.clock.advance(1);
    await app.webhooks.cleanup();
    expect(await outboxOf(app, delivered.id), "7 days and 1 ms: deleted").toHaveLength(0);
    expect(await outboxOf(app, pending.id), "undelivered rows stay").toHaveLength(1);
  });
});
