import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import {
  commit,
  createBranch,
  errorOf,
  expectError,
  expectOk,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";
import { branchOf, expectMerged, rebase, treeOf } from "./fixtures.ts";

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

/** The text of `path` on `branch`. */
const text = async (fx: RepoFixture, path: string, branch: string) => {
  const file = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
    params: { repo: fx.repo, path },
    query: { branch },
  });
  return Buffer.from(okBody(file).content, "base64").toString();
};

describe("rebase", () => {
  it("replays the branch's commits onto main's head; reads at earlier sequences keep their answers", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "base.md": "b1" });
    await createBranch(fx, "topic");
    const t1 = await commit(fx, "topic", { "t.md": "one" }, "first");
    await commit(fx, "topic", { "t.md": "two", "u.md": "u" }, "second");
    const mainHead = await commit(fx, "main", { "base.md": "b2", "m.md": "m" });
    const oldTree = await treeOf(fx, "topic", t1);

    const { result: res, events } = await withEvents(fx.repo, () => rebase(fx, "topic"));
    expectOk(res, 200);
    expect(res.body).toEqual({
      branch: "topic",
      new_base_sequence: mainHead,
      new_head_sequence: mainHead + 2,
      commits_replayed: 2,
      base_sequence: mainHead,
      head_sequence: mainHead + 2,
    });

    expect((await treeOf(fx, "topic")).entries.map((e) => e.path)).toEqual([
      "base.md",
      "m.md",
      "t.md",
      "u.md",
    ]);
    expect(await text(fx, "base.md", "topic")).toBe("b2");
    expect(await text(fx, "t.md", "topic")).toBe("two");
    expect(await treeOf(fx, "topic", t1)).toEqual(oldTree);
    const replayed = await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
      params: { repo: fx.repo, sequence: String(mainHead + 1) },
    });
    expect(okBody(replayed)).toMatchObject({ branch: "topic", message: "first", author: fx.owner });
    expect(await branchOf(fx, "topic")).toMatchObject({
      base_sequence: mainHead,
      head_sequence: mainHead + 2,
    });
    // The event carries the spec's fields; base_sequence and head_sequence are only in the answer.
    const { branch, new_base_sequence, new_head_sequence, commits_replayed } = res.body;
    const result = { branch, new_base_sequence, new_head_sequence, commits_replayed };
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
    expect(okBody(await rebase(fx, "revert")).commits_replayed).toBe(1);
    expect(await text(fx, "x.md", "revert")).toBe("v3");
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
    expectError(res, 409, "REBASE_CONFLICT");
    expect(errorOf(res).conflicts).toEqual([
      {
        path: "c.md",
        main_version_id: expect.any(String),
        branch_version_id: expect.any(String),
        merge: "text",
        paths: [{ path: "", line: 1, base: "base", ours: "main", theirs: "branch" }],
      },
    ]);
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("keeps the hash chain of the branch intact across the replay", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "chain");
    await commit(fx, "chain", { "a.md": "a" });
    await commit(fx, "main", { "m.md": "m" });
    await rebase(fx, "chain");
    const chain = await api(fx.client).get("/repos/:repo*/-/chain", {
      params: { repo: fx.repo },
      query: { from: "1", to: "10" },
    });
    const onChain = okBody(chain).commits.filter((c) => c.branch === "chain");
    expect(onChain).toHaveLength(2);
    expect(onChain[1]?.prev_hash).toBe(onChain[0]?.hash);
  });
});
