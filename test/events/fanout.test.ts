import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp } from "../support/app.ts";
import { client } from "../support/client.ts";
import { commit, repoWithOwner, useFixture } from "../support/world.ts";
import { type ChildServer, childInstance, secondInstance } from "./instances.ts";
import { commitEvents, openSse, type ReceivedEvent, type SseClient, sleep, sse } from "./sse.ts";

/** Events reach every instance's streams, in one order, each once, whichever instance made the mutation. */

const open: SseClient[] = [];
const track = (s: SseClient) => {
  open.push(s);
  return s;
};
async function streamOn(url: string, path: string, email: string) {
  const s = track(await openSse(url, path, { token: await app.idp.token(email) }));
  expect(s.status).toBe(200);
  return s;
}

const app = useFixture(startTestApp);
const second = useFixture(() => secondInstance(app));
const fx = useFixture(() => repoWithOwner(app));
afterAll(async () => {
  for (const s of open) s.close();
});

function expectIncreasing(events: ReceivedEvent[]) {
  const cursors = events.map((e) => e.id.split(".").map(BigInt) as [bigint, bigint]);
  for (let i = 1; i < cursors.length; i++) {
    const [a, b] = [cursors[i - 1]!, cursors[i]!];
    expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `${events[i - 1]!.id} < ${events[i]!.id}`).toBe(
      true,
    );
  }
}

describe("two instances against one database", () => {
  it("a mutation made through either instance reaches the streams of both", async () => {
    const onFirst = await streamOn(app.url, `/repos/${fx.repo}/-/events`, fx.owner);
    const onSecond = await streamOn(second.url, `/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "a.md": "via the first" }, "via first");
    const viaSecond = client(second.url, () => app.idp.token(fx.owner));
    const res = await viaSecond.post(`${fx.base}/commit`, {
      branch: "main",
      message: "via second",
      files: [{ path: "a.md", content: Buffer.from("via the second").toString("base64") }],
    });
    expect(res.status).toBe(201);
    for (const s of [onFirst, onSecond]) {
      await s.until((c) => commitEvents(c).length >= 2, 10_000, "2 commits");
      expect(commitEvents(s).map((e) => e.envelope.data.message)).toEqual(["via first", "via second"]);
    }
    expect(commitEvents(onFirst).map((e) => e.id)).toEqual(commitEvents(onSecond).map((e) => e.id));
  });

  it("a client resuming on the other instance continues without gap or repeat", async () => {
    const s = await streamOn(app.url, `/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "b.md": "1" }, "r1");
    await s.until((c) => commitEvents(c).length >= 1, 10_000, "the commit");
    const [r1] = commitEvents(s);
    s.close();
    await commit(fx, "main", { "b.md": "2" }, "r2");
    const resumed = track(
      await openSse(second.url, `/repos/${fx.repo}/-/events`, {
        token: await app.idp.token(fx.owner),
        headers: { "last-event-id": r1!.id },
      }),
    );
    await commit(fx, "main", { "b.md": "3" }, "r3");
    await resumed.waitForEvents(2);
    await sleep(100);
    expect(resumed.events().map((e) => e.envelope.data.message)).toEqual(["r2", "r3"]);
  });

  it("many concurrent commits arrive on both instances exactly once, in the same increasing order", async () => {
    const repos = [fx, await repoWithOwner(app), await repoWithOwner(app)];
    const onFirst = await streamOn(app.url, "/events", ADMIN);
    const onSecond = await streamOn(second.url, "/events", ADMIN);
    const servers = [app.url, second.url];
    const branches = ["main", "b1", "b2"];
    for (const r of repos)
      for (const b of branches.slice(1))
        expect((await r.client.post(`${r.base}/branch`, { name: b })).status).toBe(201);
    const expected = new Set<string>();
    const work: Promise<void>[] = [];
    let n = 0;
    for (let round = 0; round < 6; round++)
      for (const r of repos)
        for (const b of branches) {
          const i = n++;
          const message = `concurrent ${i}`;
          expected.add(message);
          const via = client(servers[i % 2]!, () => app.idp.token(r.owner));
          work.push(
            via
              .post(`${r.base}/commit`, {
                branch: b,
                message,
                files: [{ path: `f${i}.md`, content: Buffer.from(message).toString("base64") }],
              })
              .then((res) => expect(res.status, JSON.stringify(res.body)).toBe(201)),
          );
        }
    await Promise.all(work);
    const commitsOf = (s: SseClient) =>
      s.events().filter((e) => String(e.envelope.data.message ?? "").startsWith("concurrent "));
    for (const s of [onFirst, onSecond]) {
      await s.until((c) => commitsOf(c).length >= expected.size, 20_000, `${expected.size} commits`);
    }
    await sleep(300);
    for (const s of [onFirst, onSecond]) {
      const got = commitsOf(s).map((e) => e.envelope.data.message as string);
      expect(got.length).toBe(expected.size);
      expect(new Set(got)).toEqual(expected);
      expectIncreasing(s.events());
    }
    // From the first event both saw, the two streams are identical.
    const cursorOf = (id: string) => {
      const [t, p] = id.split(".").map(BigInt) as [bigint, bigint];
      return t * 2n ** 64n + p;
    };
    const [a, b] = [onFirst.events()[0]!.id, onSecond.events()[0]!.id];
    const firstCommon = cursorOf(a) > cursorOf(b) ? a : b;
    const fromCommon = (s: SseClient) => s.events().slice(s.events().findIndex((e) => e.id === firstCommon));
    expect(fromCommon(onFirst).map((e) => e.id)).toEqual(fromCommon(onSecond).map((e) => e.id));
    // And that order is the log's (txid, position) order.
    const log = await app.sql<{ id: string }>(
      "SELECT id::text FROM events WHERE data->>'message' LIKE 'concurrent %' ORDER BY txid, position",
    );
    expect(commitsOf(onFirst).map((e) => e.envelope.id)).toEqual(log.map((r) => r.id));
  });

  it("an event behind a transaction still running waits for it, so the earlier transaction's event is never skipped", async () => {
    const s = await sse(app, `/repos/${fx.repo}/-/events`, fx.owner);
    track(s);
    const held = new pg.Client({ connectionString: app.databaseUrl });
    await held.connect();
    try {
      await held.query("BEGIN");
      // An older transaction writes an event and stays open...
      await held.query(
        `INSERT INTO events (id, type, source, repo, time, data)
         VALUES (gen_random_uuid(), 'com.svc.branch.abandoned', $1, $2, now(), $3::jsonb)`,
        [
          `/repos/${fx.repo}`,
          fx.repo,
          JSON.stringify({ repo: fx.repo, branch: "held", abandoned_by: "sql" }),
        ],
      );
      // ...while a newer one commits through the API.
      await commit(fx, "main", { "h.md": "later" }, "later");
      await sleep(400);
      expect(commitEvents(s)).toEqual([]); // the later event waits: delivering it would move the cursor past the held one
      await held.query("COMMIT");
      await held.query("NOTIFY quire_events");
      const mine = (c: SseClient) =>
        c.events().filter((e) => e.envelope.data.branch === "held" || e.envelope.data.message === "later");
      await s.until((c) => mine(c).length >= 2, 10_000, "both events");
      expect(mine(s).map((e) => e.envelope.data.message ?? e.envelope.data.branch)).toEqual([
        "held",
        "later",
      ]);
    } finally {
      await held.end();
    }
  });
});

describe("a second server process", () => {
  let child: ChildServer;
  beforeAll(async () => {
    child = await childInstance(app);
  }, 90_000);
  afterAll(async () => {
    await child?.close();
  });

  it("a mutation made through one process reaches SSE clients connected to the other, both ways", async () => {
    const onChild = await streamOn(child.url, `/repos/${fx.repo}/-/events`, fx.owner);
    const onMain = await streamOn(app.url, `/repos/${fx.repo}/-/events`, fx.owner);
    await commit(fx, "main", { "p.md": "from this process" }, "from parent");
    const viaChild = client(child.url, () => app.idp.token(fx.owner));
    const res = await viaChild.post(`${fx.base}/commit`, {
      branch: "main",
      message: "from child",
      files: [{ path: "p.md", content: Buffer.from("from the child").toString("base64") }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    for (const s of [onChild, onMain]) {
      await s.until((c) => commitEvents(c).length >= 2, 15_000, "2 commits");
      expect(commitEvents(s).map((e) => e.envelope.data.message)).toEqual(["from parent", "from child"]);
    }
  });
});
