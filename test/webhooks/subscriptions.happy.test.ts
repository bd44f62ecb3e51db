import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { commit, expectOk, repoWithOwner, useFixture } from "../support/world.ts";
import { ADMIN, outboxOf, startReceiver, startWebhookApp, subscribe } from "./support.ts";

/** The subscription record, listing, deletion, and what a repo's deletion does to its subscriptions. */

const app = useFixture(startWebhookApp);
const rx = useFixture(startReceiver);
const fx = useFixture(() => repoWithOwner(app as never));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("POST /subscriptions", () => {
  it("returns 201 with the spec's record: repo, event types, config with the secret in plaintext", async () => {
    const res = await api(fx.client).post("/subscriptions", {
      body: {
        repo: fx.repo,
        event_types: ["com.svc.commit.created", "com.svc.branch.merged", "com.svc.commit.created"],
        backend: "webhook",
        config: { url: rx.url("/a"), secret: "plain" },
      },
    });
    expectOk(res, 201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      repo: fx.repo,
      event_types: ["com.svc.commit.created", "com.svc.branch.merged"],
      backend: "webhook",
      config: { url: rx.url("/a"), secret: "plain" },
      created_at: app.clock.now().toISOString(),
      created_by: fx.owner,
      failure_count: 0,
      suspended_at: null,
    });
  });

  it("omits repo (global), event_types (all types) and secret (none) when they were not given", async () => {
    const res = await api(app.as(ADMIN)).post("/subscriptions", {
      body: { backend: "webhook", config: { url: rx.url("/b") } },
    });
    expectOk(res, 201);
    expect(Object.keys(res.body).sort()).toEqual([
      "backend",
      "config",
      "created_at",
      "created_by",
      "failure_count",
      "id",
      "suspended_at",
    ]);
    expect(res.body.config).toEqual({ url: rx.url("/b") });
    expect(res.body.created_by).toBe(ADMIN);
  });

  it("lets a reader subscribe to a repo they may read", async () => {
    const reader = "reader@example.com";
    expect((await fx.client.put(`${fx.base}/roles/${reader}`, { role: "reader" })).status).toBe(200);
    await subscribe(app.as(reader), { repo: fx.repo, url: rx.url("/reader") });
  });
});

describe("GET /subscriptions", () => {
  it("shows each user their own, oldest first, and a global admin everything", async () => {
    const alice = await repoWithOwner(app as never);
    const a1 = await subscribe(alice.client, { repo: alice.repo, url: rx.url("/alice/1") });
    app.clock.advance(1); // created_at comes from the clock: make "oldest first" mean something
    const a2 = await subscribe(alice.client, { repo: alice.repo, url: rx.url("/alice/2"), secret: "k" });
    const res = await api(alice.client).get("/subscriptions");
    expectOk(res, 200);
    expect(res.body.subscriptions.map((s) => s.id)).toEqual([a1.id, a2.id]);
    expect(res.body.subscriptions[1]).toEqual(a2);
    const all = okBody(await api(app.as(ADMIN)).get("/subscriptions")).subscriptions.map((s) => s.id);
    expect(all).toEqual(expect.arrayContaining([a1.id, a2.id]));
    const [row] = await app.sql<{ n: number }>("SELECT count(*)::int AS n FROM subscriptions");
    expect(all).toHaveLength(row!.n);
    expect(okBody(await api(app.as("nobody@example.com")).get("/subscriptions"))).toEqual({
      subscriptions: [],
    });
  });
});

describe("DELETE /subscriptions/{id}", () => {
  it("deletes the subscription and its undelivered events; nothing more is sent", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/deleted") });
    await app.sql("UPDATE subscriptions SET suspended_at = $2 WHERE id = $1", [sub.id, app.clock.now()]);
    await commit(fx, "main", { "d.md": "1" });
    expect(await outboxOf(app, sub.id)).toHaveLength(1);
    expect((await fx.client.delete(`/subscriptions/${sub.id}`)).status).toBe(204);
    expect(await outboxOf(app, sub.id)).toHaveLength(0);
    await commit(fx, "main", { "d.md": "2" });
    await app.webhooks.drain();
    expect(rx.at("/deleted")).toHaveLength(0);
    expect((await fx.client.delete(`/subscriptions/${sub.id}`)).status).toBe(404);
  });

  it("a global admin may delete anyone's subscription", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/admin-deletes") });
    expect((await app.as(ADMIN).delete(`/subscriptions/${sub.id}`)).status).toBe(204);
  });
});

describe("a deleted repo", () => {
  it("takes its subscriptions with it; a new repo of the same name does not inherit them", async () => {
    const gone = await repoWithOwner(app as never);
    const sub = await subscribe(gone.client, { repo: gone.repo, url: rx.url("/gone") });
    expect((await gone.client.delete(`/repos/${gone.repo}`)).status).toBe(204);
    expect((await app.sql("SELECT 1 FROM subscriptions WHERE id = $1", [sub.id])).length).toBe(0);
    // Someone else recreates the name; its events go to nobody who subscribed to the old repo.
    const admin = app.as(ADMIN);
    expect((await admin.post("/repos", { owner: gone.org, name: gone.repo })).status).toBe(201);
    await app.webhooks.drain();
    expect(rx.at("/gone")).toHaveLength(0);
  });
});
