import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner, sha256hex } from "./fixtures.ts";

const png1 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 1]);
const png2 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 2]);

interface Change {
  path: string;
  status: string;
  binary: boolean;
  diff: string;
}

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", {
    "keep.md": "same\n",
    "mod.md": "line1\nline2\nline3\n",
    "del.md": "bye\n",
    "img.png": png1,
    "old.png": png1,
    "revert.md": "orig\n",
    "conflict.md": "base\n",
    "branch-deletes.md": "base\n",
    "main-deletes.md": "base\n",
    "main-only.md": "m\n",
  });
  await createBranch(fx, "feature/x");
  await commit(fx, "feature/x", {
    "mod.md": "line1\nLINE2\nline3\n",
    "del.md": null,
    "add.md": "new file\n",
    "img.png": png2,
    "old.png": null,
    "revert.md": "changed\n",
    "conflict.md": "branch\n",
    "branch-deletes.md": null,
    "main-deletes.md": "branch\n",
    "new.bin": png2,
    "temp.md": "short-lived\n",
  });
  await commit(fx, "feature/x", { "revert.md": "orig\n", "temp.md": null });
  await commit(fx, "main", {
    "conflict.md": "main\n",
    "branch-deletes.md": "main\n",
    "main-deletes.md": null,
    "main-only.md": "m2\n",
  });
});

const diff = async (branch: string) => {
  const res = await api(fx.client).get("/repos/:repo*/-/diff", {
    params: { repo: fx.repo },
    query: { branch },
  });
  expectOk(res, 200);
  expect(Object.keys(res.body).sort()).toEqual(["changes", "conflicts"]);
  return res.body as { changes: Change[]; conflicts: unknown[] };
};

describe("a branch's diff", () => {
  it("lists changed paths in byte order with status added, modified or deleted", async () => {
    const { changes } = await diff("feature/x");
    expect(changes.map((c) => [c.path, c.status, c.binary])).toEqual([
      ["add.md", "added", false],
      ["branch-deletes.md", "deleted", false],
      ["conflict.md", "modified", false],
      ["del.md", "deleted", false],
      ["img.png", "modified", true],
      ["main-deletes.md", "modified", false],
      ["mod.md", "modified", false],
      ["new.bin", "added", true],
      ["old.png", "deleted", true],
    ]);
  });

  it("leaves out paths the branch did not change, changed back, or added then deleted", async () => {
    const listed = (await diff("feature/x")).changes.map((c) => c.path);
    for (const p of ["keep.md", "revert.md", "temp.md", "main-only.md"]) expect(listed).not.toContain(p);
  });

  it("gives a unified diff for text files with the removed and added lines", async () => {
    const { changes } = await diff("feature/x");
    const by = (p: string) => changes.find((c) => c.path === p)!;
    expect(by("mod.md").diff).toContain("-line2");
    expect(by("mod.md").diff).toContain("+LINE2");
    expect(by("mod.md").diff).toContain(" line1");
    expect(by("mod.md").diff).toContain("mod.md");
    expect(by("add.md").diff).toContain("+new file");
    expect(by("del.md").diff).toContain("-bye");
  });

  it("gives an empty diff for binary files", async () => {
    const { changes } = await diff("feature/x");
    for (const p of ["img.png", "new.bin", "old.png"])
      expect(changes.find((c) => c.path === p)!.diff).toBe("");
  });

  it("reports paths changed on both main (after the base) and the branch as conflicts", async () => {
    const { conflicts } = await diff("feature/x");
    expect(conflicts).toEqual([
      {
        path: "branch-deletes.md",
        main_version_id: sha256hex("main\n"),
        branch_version_id: null,
        merge: "file",
        paths: [],
      },
      {
        path: "conflict.md",
        main_version_id: sha256hex("main\n"),
        branch_version_id: sha256hex("branch\n"),
        merge: "text",
        paths: [{ path: "", line: 1, base: "base\n", ours: "main\n", theirs: "branch\n" }],
      },
      {
        path: "main-deletes.md",
        main_version_id: null,
        branch_version_id: sha256hex("branch\n"),
        merge: "file",
        paths: [],
      },
    ]);
  });

  it("leaves out a file both sides changed that merges by content, as the merge would", async () => {
    await commit(fx, "main", { "both.md": "one\ntwo\nthree\nfour\nfive\n" });
    await createBranch(fx, "apart");
    await commit(fx, "apart", { "both.md": "one\ntwo\nthree\nfour\nFIVE\n" });
    await commit(fx, "main", { "both.md": "ONE\ntwo\nthree\nfour\nfive\n" });
    const { changes, conflicts } = await diff("apart");
    expect(changes.map((c) => c.path)).toEqual(["both.md"]);
    expect(conflicts).toEqual([]);
  });

  it("does not report a conflict for a path the branch changed back, or added and removed again", async () => {
    await commit(fx, "main", { "rv.md": "base\n" });
    await createBranch(fx, "reverted");
    await commit(fx, "reverted", { "rv.md": "changed\n", "tmp.md": "temporary\n" });
    await commit(fx, "reverted", { "rv.md": "base\n", "tmp.md": null });
    await commit(fx, "main", { "rv.md": "main\n", "tmp.md": "main\n" });
    // The branch has no net change, so merging it cannot clash with main's changes.
    expect(await diff("reverted")).toEqual({ changes: [], conflicts: [] });
  });

  it("of a branch with no commits is empty", async () => {
    await createBranch(fx, "untouched");
    expect(await diff("untouched")).toEqual({ changes: [], conflicts: [] });
  });

  it("of a branch created after main's changes has no conflicts", async () => {
    await createBranch(fx, "fresh");
    await commit(fx, "fresh", { "conflict.md": "fresh\n" });
    const d = await diff("fresh");
    expect(d.changes).toEqual([expect.objectContaining({ path: "conflict.md", status: "modified" })]);
    expect(d.conflicts).toEqual([]);
  });
});
