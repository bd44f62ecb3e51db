import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { commit, repoWithOwner, useFixture } from "../support/world.ts";
import { commitEvents, sleep, sse, streams } from "./sse.ts";

/** Access is re-checked while a stream is open: a client that may no longer read the repo stops receiving. */

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
const stream = streams(app, { ok: true });

describe("revocation", () => {
  it("a reader whose role is removed gets no further event and the stream is closed", async () => {
    const reader = "revoked@example.com";
    expect((await fx.client.put(`${fx.base}/roles/${reader}`, { role: "reader" })).status).toBe(200);
    const bystander = "stays@example.com";
    expect((await fx.client.put(`${fx.base}/roles/${bystander}`, { role: "reader" })).status).toBe(200);
    const s = await stream(`/repos/${fx.repo}/-/events`, reader);
    const other = await stream(`/repos/${fx.repo}/-/events`, bystander);
    await commit(fx, "main", { "a.md": "visible" }, "visible");
    await s.until((c) => commitEvents(c).length >= 1, 10_000, "the commit");
    expect((await fx.client.delete(`${fx.base}/roles/${reader}`)).status).toBe(204);
    await commit(fx, "main", { "a.md": "secret" }, "secret");
    await s.ended;
    await other.until((c) => commitEvents(c).length >= 2, 10_000, "both commits");
    expect(s.events().map((e) => e.envelope.data.message)).toEqual(["visible"]);
    // Not even the role.changed event that revoked it.
    expect(s.events().some((e) => e.envelope.type === "com.svc.role.changed")).toBe(false);
    const closed = s.messages.find((m) => m.event === "closed");
    expect(JSON.parse(closed!.data!)).toMatchObject({ reason: "access revoked" });
    // The others keep receiving, and reconnecting is refused.
    const afterVisible = other
      .events()
      .slice(other.events().findIndex((e) => e.envelope.data.message === "visible"));
    expect(afterVisible.map((e) => e.envelope.type)).toEqual([
      "com.svc.commit.created",
      "com.svc.role.changed",
      "com.svc.commit.created",
    ]);
    expect(
      (await sse(app, `/repos/${fx.repo}/-/events`, reader, { "last-event-id": s.events()[0]!.id })).status,
    ).toBe(404);
  });

  it("a role lowered but still reader or higher keeps the stream", async () => {
    const writer = "lowered@example.com";
    expect((await fx.client.put(`${fx.base}/roles/${writer}`, { role: "writer" })).status).toBe(200);
    const s = await stream(`/repos/${fx.repo}/-/events`, writer);
    expect((await fx.client.put(`${fx.base}/roles/${writer}`, { role: "reader" })).status).toBe(200);
    await commit(fx, "main", { "b.md": "still" }, "still");
    await s.until((c) => commitEvents(c).length >= 1, 10_000, "the commit");
    expect(s.events().some((e) => e.envelope.type === "com.svc.role.changed")).toBe(true);
    expect(s.isEnded()).toBe(false);
  });

  it("an org member removed from the org is dropped by the periodic re-check (membership emits no event)", async () => {
    const member = "member@example.com";
    expect((await fx.client.post(`/orgs/${fx.org}/members/${member}`, { role: "member" })).status).toBe(201);
    app.server.ctx.events.tune({ recheckMs: 200 });
    try {
      const s = await stream(`/repos/${fx.repo}/-/events`, member);
      await commit(fx, "main", { "c.md": "seen" }, "seen");
      await s.until((c) => commitEvents(c).length >= 1, 10_000, "the commit");
      expect((await fx.client.delete(`/orgs/${fx.org}/members/${member}`)).status).toBe(204);
      await s.ended;
      await commit(fx, "main", { "c.md": "unseen" }, "unseen");
      await sleep(100);
      expect(commitEvents(s).map((e) => e.envelope.data.message)).toEqual(["seen"]);
    } finally {
      app.server.ctx.events.tune({ recheckMs: 30_000 });
    }
  });

  it("a deleted repo's streams get repo.deleted and then end", async () => {
    const gone = await repoWithOwner(app);
    const s = await stream(`/repos/${gone.repo}/-/events`, gone.owner);
    expect((await gone.client.delete(`/repos/${gone.repo}`)).status).toBe(204);
    await s.ended;
    expect(s.events().at(-1)!.envelope.type).toBe("com.svc.repo.deleted");
    expect(JSON.parse(s.messages.find((m) => m.event === "closed")!.data!)).toMatchObject({
      reason: "repo deleted",
    });
  });
});
