import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, repoWithOwner, useFixture } from "../support/world.ts";
import { expectMerged, merge } from "./fixtures.ts";

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
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("MERGE_CONFLICT");
    expect(res.body.conflicts).toEqual([
      { path: "both.md", main_version_id: expect.any(String), branch_version_id: expect.any(String) },
    ]);
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a draft (409 BRANCH_DRAFT), a merged branch (409 BRANCH_NOT_ACTIVE), main (400) and an unknown branch (404)", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "draft", true);
    await commit(fx, "draft", { "d.md": "d" });
    expect((await merge(fx, "draft")).body.code).toBe("BRANCH_DRAFT");
    await createBranch(fx, "done");
    await expectMerged(fx, "done");
    const again = await merge(fx, "done");
    expect([again.status, again.body.code]).toEqual([409, "BRANCH_NOT_ACTIVE"]);
    expect((await merge(fx, "main")).status).toBe(400);
    expect((await merge(fx, "nope")).body.code).toBe("BRANCH_NOT_FOUND");
    expect((await fx.client.post(`${fx.base}/merge`, {})).status).toBe(400);
  });

  it("needs the maintainer role", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "w");
    await fx.client.put(`/repos/${fx.repo}/-/roles/writer@example.com`, { role: "writer" });
    const res = await app.as("writer@example.com").post(`${fx.base}/merge`, { branch: "w" });
    expect([res.status, res.body.code]).toEqual([403, "FORBIDDEN"]);
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
    const main = await fx.client.get(`${fx.base}/branch/main`);
    expect(main.body.head_sequence).toBe(4);
  });

  it("a commit racing a merge of the same branch either lands before the merge or is refused after it", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "race");
    await commit(fx, "race", { "r0.md": "0" });
    const [merged, late] = await Promise.all([
      merge(fx, "race"),
      fx.client.post(`${fx.base}/commit`, {
        branch: "race",
        message: "late",
        files: [{ path: "r1.md", content: "MQ==" }],
      }),
    ]);
    expect(merged.status).toBe(200);
    const tree = await fx.client.get(`${fx.base}/tree`);
    const paths = tree.body.entries.map((e: { path: string }) => e.path);
    if (late.status === 201) expect(paths).toContain("r1.md");
    else {
      expect([late.status, late.body.code]).toEqual([409, "BRANCH_NOT_ACTIVE"]);
      expect(paths).not.toContain("r1.md");
    }
  });
});
