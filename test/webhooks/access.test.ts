import { describe, expect, it } from "vitest";
import { commit, repoWithOwner, useFixture } from "../support/world.ts";
import { outboxOf, startReceiver, startWebhookApp, subscribe } from "./support.ts";

/**
 * Access is checked again when sending: a subscription whose creator may no longer read what it
 * covers gets nothing (those events are dropped for it), and gets events again once access is back.
 */

const app = useFixture(startWebhookApp);
const rx = useFixture(startReceiver);
const fx = useFixture(() => repoWithOwner(app as never));

const messages = (path: string) => rx.at(path).map((r) => r.body.data["message"]);

describe("a creator who loses access", () => {
  it("a reader whose role is removed receives nothing more; restored, receives again", async () => {
    const reader = "fading-reader@example.com";
    expect((await fx.client.put(`${fx.base}/roles/${reader}`, { role: "reader" })).status).toBe(200);
    const sub = await subscribe(app.as(reader), {
      repo: fx.repo,
      event_types: ["com.svc.commit.created"],
      url: rx.url("/revoked"),
    });
    await commit(fx, "main", { "a.md": "1" }, "while reader");
    await app.webhooks.drain();
    expect((await fx.client.delete(`${fx.base}/roles/${reader}`)).status).toBe(204);
    await commit(fx, "main", { "a.md": "2" }, "after revocation");
    await app.webhooks.drain();
    expect(messages("/revoked")).toEqual(["while reader"]);
    // The event was dropped for this subscription, not held for later.
    expect((await outboxOf(app, sub.id)).map((r) => r.delivered_at !== null)).toEqual([true]);
    expect((await fx.client.put(`${fx.base}/roles/${reader}`, { role: "reader" })).status).toBe(200);
    await commit(fx, "main", { "a.md": "3" }, "restored");
    await app.webhooks.drain();
    expect(messages("/revoked")).toEqual(["while reader", "restored"]);
  });

  it("an org member removed from the org receives nothing more", async () => {
    const member = "leaving-member@example.com";
    expect((await fx.client.post(`/orgs/${fx.org}/members/${member}`, { role: "member" })).status).toBe(201);
    await subscribe(app.as(member), {
      repo: fx.repo,
      event_types: ["com.svc.commit.created"],
      url: rx.url("/left-org"),
    });
    await commit(fx, "main", { "b.md": "1" }, "member");
    await app.webhooks.drain();
    expect((await fx.client.delete(`/orgs/${fx.org}/members/${member}`)).status).toBe(204);
    await commit(fx, "main", { "b.md": "2" }, "gone");
    await app.webhooks.drain();
    expect(messages("/left-org")).toEqual(["member"]);
  });

  it("a global subscription whose creator is no longer a global admin receives nothing", async () => {
    const [row] = await app.sql<{ id: string }>(
      `INSERT INTO subscriptions (id, backend, url, created_by)
       VALUES (gen_random_uuid(), 'webhook', $1, 'former-admin@example.com') RETURNING id`,
      [rx.url("/former-admin")],
    );
    await commit(fx, "main", { "c.md": "1" });
    await app.webhooks.drain();
    expect(rx.at("/former-admin")).toHaveLength(0);
    expect(await outboxOf(app, row!.id)).toEqual([]);
  });
});
