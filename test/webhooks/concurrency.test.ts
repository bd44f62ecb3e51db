import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../shared/clock.ts";
import { leaseDue } from "../../shared/webhooks/outbox.ts";
import { envelopeBody, sendWebhook } from "../../shared/webhooks/send.ts";
import { ADMIN, freshDatabase } from "../support/app.ts";
import { untilListening } from "../support/child.ts";
import { client } from "../support/client.ts";
import { startTestIdp } from "../support/idp.ts";
import { freePort } from "../support/ports.ts";
import { commit, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";
import { outboxOf, startReceiver, startWebhookApp, subscribe, type WebhookApp } from "./support.ts";

/**
 * Several deliverers on one database never send the same attempt twice, and a deliverer that dies
 * mid-send loses nothing: after its lease runs out another one sends the row again, same event id.
 */

const rx = useFixture(startReceiver);

describe("two instances on one database", () => {
  let a: WebhookApp;
  let b: WebhookApp;
  beforeAll(async () => {
    a = await startWebhookApp();
    b = await startWebhookApp({ sharing: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("deliver every (event, subscription) exactly once between them, under concurrent commits", async () => {
    const fx = await repoWithOwner(a as never);
    const subs = [];
    for (let i = 0; i < 6; i++)
      subs.push(await subscribe(fx.client, { repo: fx.repo, url: rx.url(`/two/${i}`) }));
    const EVENTS = 40;
    // Commits while both workers run (each woken by every commit through LISTEN), plus drains
    // driven from the test on both, all at once.
    const writes = Array.from({ length: EVENTS }, (_, i) =>
      commit(fx, `main`, { [`f${i}.md`]: String(i) }, `e${i}`),
    );
    const driven = Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).webhooks.drain());
    await Promise.all([...writes, ...driven]);
    await Promise.all([a.webhooks.drain(), b.webhooks.drain()]);
    const expected = subs.length * EVENTS;
    // A drain returns when it finds nothing left to lease; a send the other instance's own loop
    // (woken by LISTEN or a due timer) leased just before may still be on its way: let it land.
    const received = () => rx.receipts.filter((r) => r.path.startsWith("/two/"));
    for (let i = 0; received().length < expected && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      await Promise.all([a.webhooks.drain(), b.webhooks.drain()]);
    }
    const got = received();
    expect(got.length).toBe(expected);
    const keys = new Set(got.map((r) => `${r.path} ${r.body.id}`));
    expect(keys.size).toBe(expected);
    const rows = await a.sql<{ n: number; attempts: number }>(
      "SELECT count(*)::int AS n, max(attempts) AS attempts FROM webhook_outbox WHERE delivered_at IS NOT NULL",
    );
    expect(rows[0]).toEqual({ n: expected, attempts: 1 });
  });
});

describe("a deliverer that dies mid-send", () => {
  let app: WebhookApp;
  let fx: RepoFixture;
  beforeAll(async () => {
    app = await startWebhookApp();
    fx = await repoWithOwner(app as never);
  });
  afterAll(async () => {
    await app?.close();
  });

  it("leased and sent, then vanished without recording: after the lease the row is sent again, same id", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/dies") });
    // Subscribe while suspended so that the running worker leaves the row to this "doomed" one.
    await app.sql("UPDATE subscriptions SET suspended_at = $2 WHERE id = $1", [sub.id, app.clock.now()]);
    await commit(fx, "main", { "x.md": "1" }, "doomed");
    // Unsuspend and lease in one transaction, so the running worker never sees the row free.
    const db = await app.server.ctx.pool.connect();
    let leased: Awaited<ReturnType<typeof leaseDue>>;
    try {
      await db.query("BEGIN");
      await db.query("UPDATE subscriptions SET suspended_at = NULL WHERE id = $1", [sub.id]);
      leased = await leaseDue(db, {
        now: app.clock.now(),
        batch: 10,
        perSubscription: 10,
        leaseSeconds: 15,
        busy: [],
        admins: [],
      });
      await db.query("COMMIT");
    } finally {
      db.release();
    }
    expect(leased).toHaveLength(1);
    const sent = await sendWebhook({ url: leased[0]!.url, secret: null }, envelopeBody(leased[0]!.event), {
      allowPrivate: true,
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
      timeoutMs: 1000,
    });
    expect(sent.ok).toBe(true);
    // ... and the worker is gone. Nobody else may send while its lease lasts.
    await app.webhooks.drain();
    app.clock.advance(15_000 - 1);
    await app.webhooks.drain();
    expect(rx.at("/dies")).toHaveLength(1);
    app.clock.advance(1);
    await app.webhooks.drain();
    const got = rx.at("/dies");
    expect(got).toHaveLength(2);
    expect(got[1]!.body.id).toBe(got[0]!.body.id);
    expect(got[1]!.raw.equals(got[0]!.raw)).toBe(true);
    const [row] = await outboxOf(app, sub.id);
    expect(row).toMatchObject({ attempts: 2, last_status: 200 });
    expect(row!.delivered_at).not.toBeNull();
  });
});

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Quire as `npm start` runs it, in a child process we can kill. */
async function childServer(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  // One process (node with tsx's loader), not the tsx wrapper: a SIGKILL must kill the server itself.
  const child = spawn(process.execPath, ["--import", "tsx", "functions/main.ts"], {
    cwd: ROOT,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await untilListening(child, "child");
  return { url: `http://127.0.0.1:${port}`, child };
}

describe("kill and restart", () => {
  it("SIGKILL while sending, events committed meanwhile: after a restart every event arrives", async () => {
    const idp = await startTestIdp();
    const databaseUrl = await freshDatabase();
    const { url, child } = await childServer({
      DATABASE_URL: databaseUrl,
      OIDC_ISSUER: idp.issuer,
      GLOBAL_ADMINS: ADMIN,
      LOG_LEVEL: "info",
      SVC_WEBHOOK_ALLOW_PRIVATE: "true",
    });
    let restarted: WebhookApp | undefined;
    try {
      const admin = client(url, () => idp.token(ADMIN));
      expect((await admin.post("/orgs", { name: "killed" })).status).toBe(201);
      expect((await admin.post("/repos", { owner: "killed", name: "killed/docs" })).status).toBe(201);
      const sub = await subscribe(admin, { repo: "killed/docs", url: rx.url("/killed") });
      rx.set({ kind: "hang" }); // the first send stays in flight until the process dies
      const messages = ["one", "two", "three", "four"];
      for (const message of messages) {
        const res = await admin.post("/repos/killed/docs/-/commit", {
          branch: "main",
          message,
          files: [{ path: `${message}.md`, content: Buffer.from(message).toString("base64") }],
        });
        expect(res.status).toBe(201);
      }
      await rx.waitFor(1, "/killed");
      child.kill("SIGKILL");
      await once(child, "exit");
      rx.release();
      rx.set({ kind: "ok" });

      // A new instance, later: its clock is past every lease the dead one held.
      restarted = await startWebhookApp({
        sharing: { databaseUrl, idp },
        clock: new ManualClock(new Date(Date.now() + 10 * 60_000)),
      });
      await restarted.webhooks.drain();
      const rows = await outboxOf(restarted, sub.id);
      expect(rows).toHaveLength(messages.length);
      expect(rows.every((r) => r.delivered_at !== null)).toBe(true);
      const got = rx.at("/killed");
      // The one in flight at the kill came twice, with the same id; the others once each.
      expect(got.map((r) => r.body.data["message"])).toEqual(["one", ...messages]);
      expect(got[1]!.body.id).toBe(got[0]!.body.id);
      expect(new Set(got.map((r) => r.body.id)).size).toBe(messages.length);
      expect(got.map((r) => r.body.id).slice(1)).toEqual(rows.map((r) => r.event_id));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await restarted?.close();
      await idp.close();
    }
  }, 120_000);
});
