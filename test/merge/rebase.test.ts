import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, repoWithOwner, useFixture } from "../support/world.ts";
import { expectMerged, rebase } from "./fixtures.ts";

const app = useFixture(startTestApp);

/** What `action` answered, and the events of `repo` it recorded, in log order. */
async function withEvents<T>(repo: string, action: () => Promise<T>) {
  const newest = "SELECT coalesce(max(position), 0)::text AS p FROM events WHERE repo = $1";
  const [before] = await app.sql<{ p: string }>(newest, [repo]);
  const result = await action();
  const events = await app.sql<{ type: string; data: Record<string, unknown> }>(
    "SELECT type, data FROM events WHERE repo = $1 AND position > $2::bigint ORDER BY position",
    [repo, before!.p],
  );
  return { result, events };
}

const text = async (res: Promise<{ body: { content: string } }>) =>
  Buffer.from((await res).body.content, "base64").toString();

describe("rebase", () => {
  it("replays the branch's commits onto main's head; reads at earlier sequences keep their answers", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "base.md": "b1" });
    await createBranch(fx, "topic");
    const t1 = await commit(fx, "topic", { "t.md": "one" }, "first");
    await commit(fx, "topic", { "t.md": "two", "u.md": "u" }, "second");
    const mainHead = await commit(fx, "main", { "base.md": "b2", "m.md": "m" });
    const oldTree = await fx.client.get(`${fx.base}/tree?branch=topic&at=${t1}`);

    const { result: res, events } = await withEvents(fx.repo, () => rebase(fx, "topic"));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      branch: "topic",
      new_base_sequence: mainHead,
      new_head_sequence: mainHead + 2,
      commits_replayed: 2,
      base_sequence: mainHead,
      head_sequence: mainHead + 2,
    });

    const tree = await fx.client.get(`${fx.base}/tree?branch=topic`);
    expect(tree.body.entries.map((e: { path: string }) => e.path)).toEqual([
      "base.md",
      "m.md",
      "t.md",
      "u.md",
    ]);
    expect(await text(fx.client.get(`${fx.base}/file/base.md?branch=topic`))).toBe("b2");
    expect(await text(fx.client.get(`${fx.base}/file/t.md?branch=topic`))).toBe("two");
    expect((await fx.client.get(`${fx.base}/tree?branch=topic&at=${t1}`)).body).toEqual(oldTree.body);
    const replayed = await fx.client.get(`${fx.base}/commit/${mainHead + 1}`);
    expect(replayed.body).toMatchObject({ branch: "topic", message: "first", author: fx.owner });
    const branch = await fx.client.get(`${fx.base}/branch/topic`);
    expect(branch.body).toMatchObject({ base_sequence: mainHead, head_sequence: mainHead + 2 });
    // The event carries the spec's fields; base_sequence and head_sequence are only in the answer.
    const { base_sequence: _base, head_sequence: _head, ...result } = res.body;
    // One commit.created, for the new head only (what a commit of it would have recorded), so CI
    // tests the rebased head once; then branch.rebased.
    expect(events).toEqual([
      {
        type: "com.svc.commit.created",
        data: {
          repo: fx.repo,
          branch: "topic",
          sequence: mainHead + 2,
          author: fx.owner,
          message: "second",
          file_count: 2,
        },
      },
      { type: "com.svc.branch.rebased", data: { repo: fx.repo, ...result, rebased_by: fx.owner } },
    ]);
    expect((await expectMerged(fx, "topic")).sequence).toBe(mainHead + 3);
  });

  it("leaves a path the branch changed and changed back to main", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "x.md": "v1" });
    await createBranch(fx, "revert");
    await commit(fx, "revert", { "x.md": "mine", "y.md": "y" });
    await commit(fx, "revert", { "x.md": "v1" });
    await commit(fx, "main", { "x.md": "v3" });
    const res = await rebase(fx, "revert");
    expect(res.body.commits_replayed).toBe(1);
    expect(await text(fx.client.get(`${fx.base}/file/x.md?branch=revert`))).toBe("v3");
  });

  it("a branch with nothing to replay gets one empty commit at the new base, announced as its head", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "idle");
    const mainHead = await commit(fx, "main", { "m.md": "m" });
    const { result: res, events } = await withEvents(fx.repo, () => rebase(fx, "idle"));
    expect(res.body).toMatchObject({ new_base_sequence: mainHead, commits_replayed: 0 });
    expect(events.map((e) => e.type)).toEqual(["com.svc.commit.created", "com.svc.branch.rebased"]);
    expect(events[0]!.data).toEqual({
      repo: fx.repo,
      branch: "idle",
      sequence: mainHead + 1,
      author: fx.owner,
      message: `Rebase 'idle' onto main at ${mainHead}`,
      file_count: 0,
    });
  });

  it("is a no-op when the branch is already on main's head", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "fresh");
    const before = await snapshot(app, fx);
    expect((await rebase(fx, "fresh")).body).toEqual({
      branch: "fresh",
      new_base_sequence: 0,
      new_head_sequence: 0,
      commits_replayed: 0,
      base_sequence: 0,
      head_sequence: 0,
    });
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("answers 409 REBASE_CONFLICT with the conflicts and changes nothing", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "c.md": "base" });
    await createBranch(fx, "clash");
    await commit(fx, "clash", { "c.md": "branch" });
    await commit(fx, "main", { "c.md": "main" });
    const before = await snapshot(app, fx);
    const res = await rebase(fx, "clash");
    expect([res.status, res.body.code]).toEqual([409, "REBASE_CONFLICT"]);
    expect(res.body.conflicts).toEqual([
      { path: "c.md", main_version_id: expect.any(String), branch_version_id: expect.any(String) },
    ]);
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("keeps the hash chain of the branch intact across the replay", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "chain");
    await commit(fx, "chain", { "a.md": "a" });
    await commit(fx, "main", { "m.md": "m" });
    await rebase(fx, "chain");
    const { body } = await fx.client.get(`${fx.base}/chain?from=1&to=10`);
    const onChain = body.commits.filter((c: { branch: string }) => c.branch === "chain");
    expect(onChain).toHaveLength(2);
    expect(onChain[1].prev_hash).toBe(onChain[0].hash);
  });
});
