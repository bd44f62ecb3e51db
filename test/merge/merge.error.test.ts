import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { api, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, errorOf, expectError, repoWithOwner, useFixture } from "../support/world.ts";
import { branchOf, expectMerged, merge, treeOf } from "./fixtures.ts";

const app = useFixture(startTestApp);

describe("merges that are refused", () => {
  it("answers 409 MERGE_CONFLICT with the conflicts when main changed a path the branch changed, changing nothing", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "both.md": "base", "only-main.md": "m" });
    await createBranch(fx, "clash");
    await commit(fx, "clash", { "both.md": "branch", "only-branch.md": "b" });
    await commit(fx, "main", { "both.md": "main", "only-main.md": "m2" });
    const before = await snapshot(app, fx);
    const res = await merge(fx, "clash");
    expectError(res, 409, "MERGE_CONFLICT");
    expect(errorOf(res).conflicts).toEqual([
      {
        path: "both.md",
        main_version_id: expect.any(String),
        branch_version_id: expect.any(String),
        merge: "text",
        paths: [{ path: "", line: 1, base: "base", ours: "main", theirs: "branch" }],
      },
    ]);
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a draft (409 BRANCH_DRAFT), a merged branch (409 BRANCH_NOT_ACTIVE), main (400) and an unknown branch (404)", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "draft", true);
    await commit(fx, "draft", { "d.md": "d" });
    expectError(await merge(fx, "draft"), 409, "BRANCH_DRAFT");
    await createBranch(fx, "done");
    await expectMerged(fx, "done");
    expectError(await merge(fx, "done"), 409, "BRANCH_NOT_ACTIVE");
    expect((await merge(fx, "main")).status).toBe(400);
    expect(errorOf(await merge(fx, "nope")).code).toBe("BRANCH_NOT_FOUND");
    expect(
      (await unchecked(fx.client).post("/repos/:repo*/-/merge", { params: { repo: fx.repo }, body: {} }))
        .status,
    ).toBe(400);
  });

  it("needs the maintainer role", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "w");
    await api(fx.client).put("/repos/:repo*/-/roles/:identity", {
      params: { repo: fx.repo, identity: "writer@example.com" },
      body: { role: "writer" },
    });
    const res = await api(app.as("writer@example.com")).post("/repos/:repo*/-/merge", {
      params: { repo: fx.repo },
      body: { branch: "w" },
    });
    expect([res.status, errorOf(res).code]).toEqual([403, "FORBIDDEN"]);
  });
});

describe("concurrent merges and commits", () => {
  it("never interleave: of two branches changing one path, exactly one merges and the other conflicts", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "hot.md": "base" });
    await createBranch(fx, "left");
    await createBranch(fx, "right");
    await commit(fx, "left", { "hot.md": "left" });
    await commit(fx, "right", { "hot.md": "right" });
    const results = await Promise.all([merge(fx, "left"), merge(fx, "right")]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await branchOf(fx, "main")).head_sequence).toBe(4);
  });

  it("a commit racing a merge of the same branch either lands before the merge or is refused after it", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "race");
    await commit(fx, "race", { "r0.md": "0" });
    const [merged, late] = await Promise.all([
      merge(fx, "race"),
      api(fx.client).post("/repos/:repo*/-/commit", {
        params: { repo: fx.repo },
        body: { branch: "race", message: "late", files: [{ path: "r1.md", content: "MQ==" }] },
      }),
    ]);
    expect(merged.status).toBe(200);
    const paths = (await treeOf(fx)).entries.map((e) => e.path);
    if (late.status === 201) expect(paths).toContain("r1.md");
    else {
      expect([late.status, errorOf(late).code]).toEqual([409, "BRANCH_NOT_ACTIVE"]);
      expect(paths).not.toContain("r1.md");
    }
  });
});
