import type { Message } from "@google-cloud/pubsub";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunningServer } from "../../functions/server.ts";
import { formatCursor, parseCursor } from "../../shared/events/cursor.ts";
import { createEventHub } from "../../shared/events/hub.ts";
import {
  eventOfMessage,
  loadRelayCursor,
  ORDERING_KEY,
  pubsubClient,
  pubsubFeed,
} from "../../shared/events/pubsub.ts";
import { ADMIN, startTestApp, type TestApp } from "../support/app.ts";
import { commit, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";
import { secondInstance } from "./instances.ts";
import { startPubsubFake } from "./pubsub-fake.ts";
import { openSse, type SseClient, sleep } from "./sse.ts";

/**
 * The cloud fan-out (SVC_EVENT_FANOUT=pubsub) against Google's Pub/Sub fake: a relay publishes the
 * log to a topic in cursor order, every instance consumes its own subscription.
 */

const TOPIC = "quire-events-test";
let app: TestApp;
let second: RunningServer | undefined;
let fx: RepoFixture;
const open: SseClient[] = [];
let env: Record<string, string>;

async function streamOn(url: string, path: string, email: string, headers?: Record<string, string>) {
  const s = await openSse(url, path, { token: await app.idp.token(email), ...(headers ? { headers } : {}) });
  expect(s.status).toBe(200);
  open.push(s);
  return s;
}

const fake = useFixture(startPubsubFake);
beforeAll(async () => {
  env = {
    SVC_EVENT_FANOUT: "pubsub",
    PUBSUB_EMULATOR_HOST: fake.host,
    GOOGLE_CLOUD_PROJECT: "quire-test",
    SVC_PUBSUB_TOPIC: TOPIC,
  };
  app = await startTestApp(env);
  second = await secondInstance(app, env);
  fx = await repoWithOwner(app);
  await relayedUpToNow();
});

/**
 * Waits until the relay has published every event written so far (the fixture's org and repo), so
 * a subscription made afterwards sees only the events a test makes, however busy the machine is.
 */
async function relayedUpToNow(): Promise<void> {
  const [last] = await app.sql<{ position: string }>("SELECT max(position)::text AS position FROM events");
  const db = {
    query: (text: string, values?: unknown[]) => app.sql(text, values).then((rows) => ({ rows })),
  };
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const cursor = await loadRelayCursor(db as never);
    if (cursor && cursor.position >= BigInt(last?.position ?? "0")) return;
    await sleep(50);
  }
  throw new Error("the relay did not publish the fixture's events within 20 s");
}
afterAll(async () => {
  for (const s of open) s.close();
  await second?.close();
  await app?.close();
});

describe("Pub/Sub fan-out", () => {
  it("the relay publishes every event in cursor order with a prev chain, the envelope as data", async () => {
    const pubsub = pubsubClient({ projectId: "quire-test", emulatorHost: fake.host });
    const [sub] = await pubsub
      .topic(TOPIC)
      .createSubscription("test-observer", { enableMessageOrdering: true });
    const got: Message[] = [];
    sub.on("message", (m: Message) => {
      got.push(m);
      m.ack();
    });
    try {
      for (const n of [1, 2, 3]) await commit(fx, "main", { "a.md": `${n}` }, `raw ${n}`);
      const deadline = Date.now() + 10_000;
      while (
        got.filter((m) => m.attributes["type"] === "com.svc.commit.created").length < 3 &&
        Date.now() < deadline
      )
        await sleep(50);
      const commits = got.filter((m) => m.attributes["type"] === "com.svc.commit.created");
      const envelope = z.looseObject({ data: z.looseObject({ message: z.string() }) });
      expect(commits.map((m) => envelope.parse(JSON.parse(m.data.toString())).data.message)).toEqual([
        "raw 1",
        "raw 2",
        "raw 3",
      ]);
      for (const m of got) {
        expect(m.orderingKey).toBe(ORDERING_KEY);
        const parsed = eventOfMessage(m)!;
        expect(parsed.event.envelope.specversion).toBe("1.0");
        expect(parsed.event.repo).toBe(fx.repo);
      }
      // Each message names the one before it.
      for (let i = 1; i < got.length; i++)
        expect(got[i]!.attributes["prev"]).toBe(got[i - 1]!.attributes["cursor"]);
      // The relay's cursor is stored in the database, at the last event it published.
      const stored = await loadRelayCursor({
        query: (text: string, values?: unknown[]) => app.sql(text, values).then((rows) => ({ rows })),
      } as never);
      expect(stored).toEqual(parseCursor(got[got.length - 1]!.attributes["cursor"]!));
    } finally {
      await sub.close();
      await sub.delete();
      await pubsub.close();
    }
  });

  it("events made through either instance reach the streams of both, once each, in the same order", async () => {
    const onFirst = await streamOn(app.url, `/repos/${fx.repo}/-/events`, fx.owner);
    const onSecond = await streamOn(second!.url, "/events", ADMIN);
    const viaSecond = (await import("../support/client.ts")).client(second!.url, () =>
      app.idp.token(fx.owner),
    );
    for (let n = 0; n < 10; n++) {
      if (n % 2 === 0) await commit(fx, "main", { "b.md": `${n}` }, `ps ${n}`);
      else
        expect(
          (
            await viaSecond.post(`${fx.base}/commit`, {
              branch: "main",
              message: `ps ${n}`,
              files: [{ path: "b.md", content: Buffer.from(`${n}`).toString("base64") }],
            })
          ).status,
        ).toBe(201);
    }
    const want = Array.from({ length: 10 }, (_, n) => `ps ${n}`);
    // A stream may also get an event committed just before it opened (the hub was still behind):
    // best effort at the start; what matters is that nothing after it is missed or repeated.
    const mine = (s: SseClient) =>
      s.events().filter((e) => String(e.envelope.data.message).startsWith("ps "));
    for (const s of [onFirst, onSecond]) {
      await s.until((c) => mine(c).length >= 10, 15_000, "10 events");
      await sleep(200);
      expect(mine(s).map((e) => e.envelope.data.message)).toEqual(want);
    }
    expect(mine(onFirst).map((e) => e.id)).toEqual(mine(onSecond).map((e) => e.id));
  });

  it("Last-Event-ID resumes from the log in pubsub mode too", async () => {
    const s = await streamOn(app.url, `/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "c.md": "1" }, "pr1");
    const [pr1] = await s.waitForEvents(1);
    s.close();
    await commit(fx, "main", { "c.md": "2" }, "pr2");
    const resumed = await streamOn(second!.url, `/repos/${fx.repo}/-/events`, fx.owner, {
      "last-event-id": pr1!.id,
    });
    await commit(fx, "main", { "c.md": "3" }, "pr3");
    await resumed.waitForEvents(2, 10_000);
    await sleep(200);
    expect(resumed.events().map((e) => e.envelope.data.message)).toEqual(["pr2", "pr3"]);
  });

  it("when the relaying instance stops, another takes over from the stored cursor: nothing lost", async () => {
    const deadline = Date.now() + 5_000;
    while (!app.server.ctx.events.relaying && !second!.ctx.events.relaying && Date.now() < deadline)
      await sleep(50);
    const firstLeads = app.server.ctx.events.relaying;
    expect(firstLeads !== second!.ctx.events.relaying).toBe(true); // exactly one relays
    // Stream on the instance that does not relay, then stop the relaying one (its hub, for the
    // test app, whose HTTP still takes the commits): the survivor must take over the relay.
    const s = await streamOn(firstLeads ? second!.url : app.url, `/repos/${fx.repo}/-/events`, fx.owner);
    if (firstLeads) await app.server.ctx.events.close();
    else {
      await second!.close();
      second = undefined;
    }
    for (const n of [1, 2, 3]) await commit(fx, "main", { "d.md": `${n}` }, `after ${n}`);
    await s.waitForEvents(3, 15_000);
    expect(s.events().map((e) => e.envelope.data.message)).toEqual(["after 1", "after 2", "after 3"]);
    const survivor = firstLeads ? second!.ctx.events : app.server.ctx.events;
    expect(survivor.relaying).toBe(true);
  });
});

describe("the Pub/Sub feed of a hub", () => {
  it("fills messages it never got from the log (by prev), and drops redeliveries", async () => {
    const topicName = "quire-gap-test";
    const pool = new pg.Pool({ connectionString: app.databaseUrl, max: 2 });
    const log = app.server.ctx.log;
    // A hub on its own topic with no relay: the test publishes by hand.
    const hub = createEventHub({
      pool,
      log,
      feed: pubsubFeed({
        pubsub: pubsubClient({ projectId: "quire-test", emulatorHost: fake.host }),
        topic: topicName,
        pool,
        databaseUrl: app.databaseUrl,
        log,
        sweepMs: 1_000,
        relay: false,
      }),
    });
    const publisher = pubsubClient({ projectId: "quire-test", emulatorHost: fake.host });
    try {
      await hub.start();
      const stream = await hub.open({
        actor: { identity: ADMIN, globalAdmin: true },
        scope: "global",
        filter: { repo: null, types: null },
      });
      let text = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (text += chunk));
      // Two events in the log after the hub started; only the second one's message "arrives".
      const insert = async (branch: string) => {
        const [row] = await app.sql<{ cursor: string; id: string }>(
          `INSERT INTO events (id, type, source, repo, time, data)
           VALUES (gen_random_uuid(), 'com.svc.branch.abandoned', $1, $2, now(), $3::jsonb)
           RETURNING txid::text || '.' || position AS cursor, id::text`,
          [`/repos/${fx.repo}`, fx.repo, JSON.stringify({ repo: fx.repo, branch, abandoned_by: "sql" })],
        );
        return row!;
      };
      const lost = await insert("lost");
      const arrived = await insert("arrived");
      const [envelope] = await app.sql<{ e: Record<string, unknown> }>(
        `SELECT json_build_object('specversion', '1.0', 'type', type, 'source', source, 'id', id, 'time', time,
                'datacontenttype', 'application/json', 'data', data) AS e FROM events WHERE id = $1`,
        [arrived.id],
      );
      const topic = publisher.topic(topicName, { messageOrdering: true });
      const message = {
        data: Buffer.from(JSON.stringify(envelope!.e)),
        orderingKey: ORDERING_KEY,
        attributes: {
          cursor: arrived.cursor,
          prev: lost.cursor,
          type: "com.svc.branch.abandoned",
          repo: fx.repo,
        },
      };
      await topic.publishMessage(message);
      await topic.publishMessage(message); // a redelivery
      const deadline = Date.now() + 10_000;
      while ((text.match(/^id: /gm) ?? []).length < 2 && Date.now() < deadline) await sleep(50);
      await sleep(300);
      const ids = [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
      expect(ids).toEqual([lost.cursor, arrived.cursor]);
      expect(formatCursor(hub.head!)).toBe(arrived.cursor);
    } finally {
      await hub.close();
      await publisher.close();
      await pool.end();
    }
  });
});
