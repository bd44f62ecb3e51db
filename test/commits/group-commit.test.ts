import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitBody, keyed, newKey, replayed } from "../platform/idempotency-support.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { errorOf } from "../support/world.ts";
import { commit, type RepoFixture, repoWithOwner, snapshot } from "./fixtures.ts";

let app: TestApp;
let arrived = 0;
beforeAll(async () => {
  app = await startTestApp();
  // Counts the commits that reached their group (joined one or led one), so a test knows when all
  // of them wait for the turn it holds.
  const groups = app.server.ctx.commitGroups;
  const run = groups.run.bind(groups);
  groups.run = (...args) => {
    arrived++;
    return run(...args);
  };
});
afterAll(() => app.close());

/**
 * Holds `main`'s row lock from another connection while it sends the commits, one after the other
 * reaching its group: the first commit's group waits on the lock, and every later one joins the
 * next group, in this order. Lets go once all have arrived, and answers their responses.
 */
async function whileMainIsLocked<T>(fx: RepoFixture, sends: (() => Promise<T>)[]): Promise<T[]> {
  const holder = new pg.Client({ connectionString: app.databaseUrl });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM branches WHERE repo_id = $1 AND name = 'main' FOR UPDATE", [fx.repoId]);
    const answers = [];
    for (const send of sends) {
      const before = arrived;
      answers.push(send());
      for (let i = 0; arrived === before && i < 500; i++) await new Promise((r) => setTimeout(r, 5));
      expect(arrived).toBe(before + 1);
    }
    await holder.query("COMMIT");
    return await Promise.all(answers);
  } finally {
    await holder.end();
  }
}

const post = (fx: RepoFixture, message: string, files: Record<string, string | null>) =>
  fx.client.post(`${fx.base}/commit`, {
    branch: "main",
    message,
    files: Object.entries(files).map(([path, text]) => ({ path, content: text === null ? null : b64(text) })),
  });

/** The commits of `fx` after sequence 1 (its first commit), oldest first. */
const commitsAfterFirst = (fx: RepoFixture) =>
  app.sql(
    `SELECT sequence::int, message, created_at FROM commits WHERE repo_id = $1 AND sequence > 1 ORDER BY sequence`,
    [fx.repoId],
  );

describe("group commit: commits that arrive together share one transaction", () => {
  it("writes them as one group, each with its own gap-free sequence, event and answer", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "seed.md": "seed" });
    // A suspended subscription of the repo's commits: its outbox rows are kept, not sent.
    const [sub] = await app.sql<{ id: string }>(
      `INSERT INTO subscriptions (id, repo, repo_id, event_types, backend, url, created_by, suspended_at)
       VALUES (gen_random_uuid(), $1, $2, '{com.svc.commit.created}', 'webhook', 'https://hooks.example/q', $3, now())
       RETURNING id`,
      [fx.repo, fx.repoId, fx.owner],
    );
    const answers = await whileMainIsLocked(
      fx,
      ["a", "b", "c", "d", "e"].map((n) => () => post(fx, `commit ${n}`, { [`${n}.md`]: n })),
    );
    for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(answers.map((res) => (res.body as { sequence: number }).sequence)).toEqual([2, 3, 4, 5, 6]);
    const rows = await commitsAfterFirst(fx);
    // The first commit waited on the lock alone; the four after it were written by one transaction,
    // which took their sequences (and time) in one statement.
    const times = new Set(rows.slice(1).map((r) => (r.created_at as Date).getTime()));
    expect(times.size).toBe(1);
    for (const res of answers) {
      const { sequence, message } = res.body as { sequence: number; message: string };
      expect(rows.find((r) => r.sequence === sequence)?.message).toBe(message);
    }
    // One event each, in the log in sequence order (SSE and webhooks deliver in log order).
    const events = await app.sql(
      `SELECT (data->>'sequence')::int AS sequence FROM events
       WHERE repo = $1 AND type = 'com.svc.commit.created' ORDER BY position`,
      [fx.repo],
    );
    expect(events.map((e) => Number(e.sequence))).toEqual([1, 2, 3, 4, 5, 6]);
    const outbox = await app.sql(
      `SELECT (e.data->>'sequence')::int AS sequence FROM webhook_outbox o JOIN events e ON e.id = o.event_id
       WHERE o.subscription_id = $1 ORDER BY o.id`,
      [sub?.id],
    );
    expect(outbox.map((o) => Number(o.sequence))).toEqual([2, 3, 4, 5, 6]);
    const chain = await fx.client.get(`${fx.base}/chain?from=1&to=6`);
    expect(chain.status, JSON.stringify(chain.body)).toBe(200);
  });

  it("refuses only the commit that changes nothing: the rest of its group is written", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "seed.md": "seed" });
    const before = await snapshot(app, fx);
    const answers = await whileMainIsLocked(fx, [
      () => post(fx, "first", { "x.md": "x" }),
      () => post(fx, "delete x", { "x.md": null }),
      () => post(fx, "nothing new", { "seed.md": "seed" }),
      () => post(fx, "x again", { "x.md": "x" }),
      () => post(fx, "x once more", { "x.md": "x" }),
    ]);
    expect(answers.map((res) => res.status)).toEqual([201, 201, 409, 201, 409]);
    expect(errorOf(answers[2] as Parameters<typeof errorOf>[0]).code).toBe("EMPTY_COMMIT");
    const rows = await commitsAfterFirst(fx);
    expect(rows.map((r) => [r.sequence, r.message])).toEqual([
      [2, "first"],
      [3, "delete x"],
      [4, "x again"],
    ]);
    const after = await snapshot(app, fx);
    expect(Number(after.last_sequence)).toBe(Number(before.last_sequence) + 3);
    expect(Number(after.events)).toBe(Number(before.events) + 3);
  });

  it("refuses deleting a path that an earlier commit of the group deleted", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "seed.md": "seed", "gone.md": "gone" });
    const answers = await whileMainIsLocked(fx, [
      () => post(fx, "first", { "x.md": "x" }),
      () => post(fx, "delete gone", { "gone.md": null }),
      () => post(fx, "delete gone again", { "gone.md": null }),
      () => post(fx, "delete x", { "x.md": null }),
    ]);
    expect(answers.map((res) => res.status)).toEqual([201, 201, 400, 201]);
    expect((await commitsAfterFirst(fx)).map((r) => r.message)).toEqual(["first", "delete gone", "delete x"]);
  });

  it("marks each member's Idempotency-Key in the group's transaction: a retry is answered, not redone", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "seed.md": "seed" });
    const keys = [newKey(), newKey(), newKey()];
    const answers = await whileMainIsLocked(
      fx,
      keys.map((key, i) => () => keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody(`v${i}`))),
    );
    for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(201);
    for (const [i, key] of keys.entries()) {
      const again = await keyed(fx.client, "POST", `${fx.base}/commit`, key, commitBody(`v${i}`));
      expect(again.status).toBe(201);
      expect(again.body).toEqual(answers[i]?.body);
      expect(replayed(again)).toBe(true);
    }
    expect(await commitsAfterFirst(fx)).toHaveLength(3);
  });
});
