import { createHmac, timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import { commit, createBranch, repoWithOwner, useFixture } from "../support/world.ts";
import {
  ADMIN,
  outboxOf,
  startReceiver,
  startWebhookApp,
  subscribe,
  WEBHOOK_TEST_TIMEOUT_MS,
} from "./support.ts";

/** What a receiver gets: the envelope, its headers and signature, the filters, and what counts as success. */

const app = useFixture(startWebhookApp);
const rx = useFixture(startReceiver);
const fx = useFixture(() => repoWithOwner(app as never));

/** A receiver's check, as docs/events.md tells receivers to write it. */
function verify(secret: string, raw: Buffer, header: string | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`);
  const got = Buffer.from(header ?? "");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

describe("the request", () => {
  it("POSTs the CloudEvents envelope of the events row, signed with the secret", async () => {
    const secret = "s3cret-for-signing";
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/signed"), secret });
    const sequence = await commit(fx, "main", { "a.md": "hello" }, "first");
    const [got] = await rx.waitFor(1, "/signed");
    expect(got!.headers["content-type"]).toBe("application/cloudevents+json");
    expect(verify(secret, got!.raw, got!.headers["x-svc-signature"] as string)).toBe(true);
    expect(verify("another secret", got!.raw, got!.headers["x-svc-signature"] as string)).toBe(false);
    const [event] = await app.sql<{ id: string; time: Date }>(
      "SELECT id, time FROM events WHERE type = 'com.svc.commit.created' AND repo = $1",
      [fx.repo],
    );
    expect(got!.body).toEqual({
      specversion: "1.0",
      type: "com.svc.commit.created",
      source: `/repos/${fx.repo}`,
      id: event!.id,
      time: event!.time.toISOString(),
      datacontenttype: "application/json",
      data: { repo: fx.repo, branch: "main", sequence, author: fx.owner, message: "first", file_count: 1 },
    });
    await app.webhooks.drain();
    const [row] = await outboxOf(app, sub.id);
    expect(row).toMatchObject({ attempts: 1, last_status: 200, last_error: null, leased_until: null });
    expect(row!.delivered_at).toEqual(app.clock.now());
  });

  it("sends no signature header when the subscription has no secret (or an empty one)", async () => {
    await subscribe(fx.client, { repo: fx.repo, url: rx.url("/unsigned") });
    await subscribe(fx.client, { repo: fx.repo, url: rx.url("/empty-secret"), secret: "" });
    await commit(fx, "main", { "b.md": "x" });
    const [a] = await rx.waitFor(1, "/unsigned");
    const [b] = await rx.waitFor(1, "/empty-secret");
    expect(a!.headers["x-svc-signature"]).toBeUndefined();
    expect(b!.headers["x-svc-signature"]).toBeUndefined();
  });
});

describe("filters", () => {
  it("delivers an event only to subscriptions whose repo AND event types both match", async () => {
    const other = await repoWithOwner(app as never);
    const admin = app.as(ADMIN);
    const subs = {
      repoAll: await subscribe(fx.client, { repo: fx.repo, url: rx.url("/f/repo-all") }),
      repoCommits: await subscribe(fx.client, {
        repo: fx.repo,
        event_types: ["com.svc.commit.created"],
        url: rx.url("/f/repo-commits"),
      }),
      repoBranches: await subscribe(fx.client, {
        repo: fx.repo,
        event_types: ["com.svc.branch.created"],
        url: rx.url("/f/repo-branches"),
      }),
      otherRepo: await subscribe(other.client, { repo: other.repo, url: rx.url("/f/other") }),
      global: await subscribe(admin, { url: rx.url("/f/global") }),
      globalCommits: await subscribe(admin, {
        event_types: ["com.svc.commit.created"],
        url: rx.url("/f/global-commits"),
      }),
    };
    await commit(fx, "main", { "f.md": "1" }, "filtered");
    await createBranch(fx, "feature");
    await commit(other, "main", { "g.md": "1" }, "elsewhere");
    await app.webhooks.drain();
    const types = (path: string) => rx.at(path).map((r) => `${r.body.type}@${r.body.data["repo"]}`);
    const commitHere = `com.svc.commit.created@${fx.repo}`;
    const branchHere = `com.svc.branch.created@${fx.repo}`;
    const commitThere = `com.svc.commit.created@${other.repo}`;
    expect(types("/f/repo-all")).toEqual([commitHere, branchHere]);
    expect(types("/f/repo-commits")).toEqual([commitHere]);
    expect(types("/f/repo-branches")).toEqual([branchHere]);
    expect(types("/f/other")).toEqual([commitThere]);
    expect(types("/f/global")).toEqual([commitHere, branchHere, commitThere]);
    expect(types("/f/global-commits")).toEqual([commitHere, commitThere]);
    // Nothing is queued for a subscription that does not match.
    expect(await outboxOf(app, subs.repoBranches.id)).toHaveLength(1);
    // Org events have no repo: only global subscriptions get them.
    await admin.post("/orgs", { name: `org${Date.now()}` });
    await app.webhooks.drain();
    expect(rx.at("/f/global").at(-1)!.body.type).toBe("com.svc.org.created");
    expect(rx.at("/f/repo-all")).toHaveLength(2);
  });
});

describe("what counts as success", () => {
  for (const status of [200, 201, 202, 204, 299]) {
    it(`${status} is delivered`, async () => {
      const path = `/ok/${status}`;
      const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url(path) });
      rx.set({ kind: "status", status });
      try {
        await commit(fx, "main", { "s.md": String(status) });
        await app.webhooks.drain();
      } finally {
        rx.set({ kind: "ok" });
      }
      const rows = await outboxOf(app, sub.id);
      expect(rows.map((r) => [r.last_status, r.delivered_at !== null])).toEqual([[status, true]]);
    });
  }

  for (const status of [300, 400, 404, 500, 503]) {
    it(`${status} is a failure, retried later`, async () => {
      const path = `/fail/${status}`;
      const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url(path) });
      rx.set({ kind: "status", status });
      try {
        await commit(fx, "main", { "s.md": `f${status}` });
        await app.webhooks.drain();
      } finally {
        rx.set({ kind: "ok" });
      }
      const [row] = await outboxOf(app, sub.id);
      expect(row).toMatchObject({ attempts: 1, delivered_at: null, last_status: status });
      expect(row!.last_error).toMatch(new RegExp(`^HTTP ${status}`));
      expect(row!.next_attempt_at.getTime()).toBe(app.clock.now().getTime() + 1000);
      await app.sql("DELETE FROM subscriptions WHERE id = $1", [sub.id]);
    });
  }

  it("a redirect is a failure and is not followed", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/redirecting") });
    rx.set({ kind: "redirect", to: rx.url("/redirect-target") });
    try {
      await commit(fx, "main", { "r.md": "1" });
      await app.webhooks.drain();
    } finally {
      rx.set({ kind: "ok" });
    }
    expect(rx.at("/redirecting")).toHaveLength(1);
    expect(rx.at("/redirect-target")).toHaveLength(0);
    const [row] = await outboxOf(app, sub.id);
    expect(row).toMatchObject({ delivered_at: null, last_status: 302 });
    expect(row!.last_error).toContain("not followed");
    await app.sql("DELETE FROM subscriptions WHERE id = $1", [sub.id]);
  });

  it("a receiver that does not answer within the timeout fails the attempt", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/hanging") });
    rx.set({ kind: "hang" });
    try {
      await commit(fx, "main", { "h.md": "1" });
      await app.webhooks.drain(); // after the test app's timeout
    } finally {
      rx.set({ kind: "ok" });
      rx.release();
    }
    const [row] = await outboxOf(app, sub.id);
    expect(row).toMatchObject({
      attempts: 1,
      delivered_at: null,
      last_status: null,
      last_error: `timed out after ${WEBHOOK_TEST_TIMEOUT_MS} ms`,
    });
    await app.sql("DELETE FROM subscriptions WHERE id = $1", [sub.id]);
  });
});
