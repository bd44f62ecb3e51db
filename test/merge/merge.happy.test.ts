import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, expectOk, repoWithOwner, useFixture } from "../support/world.ts";
import { branchOf, expectMerged, treeOf } from "./fixtures.ts";

const app = useFixture(startTestApp);

const eventsOf = (repo: string, type: string) =>
  app.sql<{ data: Record<string, unknown> }>(
    "SELECT data FROM events WHERE repo = $1 AND type = $2 ORDER BY position",
    [repo, type],
  );

describe("merging a branch into main", () => {
  it("writes the branch's net changes to main as one commit and marks the branch merged", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "keep.md": "k", "edit.md": "v1", "drop.md": "d" });
    await createBranch(fx, "feature");
    await commit(fx, "feature", { "edit.md": "v2", "new.md": "n" });
    await commit(fx, "feature", { "drop.md": null, "tmp.md": "t" });
    await commit(fx, "feature", { "tmp.md": null });

    const merged = await expectMerged(fx, "feature");
    expect(merged).toEqual({
      sequence: 5,
      branch: "feature",
      merged_by: fx.owner,
      proposal_id: null,
      dry_run: false,
    });
    expect((await treeOf(fx)).entries.map((e) => e.path)).toEqual(["edit.md", "keep.md", "new.md"]);
    const c = okBody(
      await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
        params: { repo: fx.repo, sequence: "5" },
      }),
    );
    expect(c).toMatchObject({ branch: "main", author: fx.owner, message: "Merge branch 'feature'" });
    expect(c.files.map((f) => f.path)).toEqual(["drop.md", "edit.md", "new.md"]);
    expect((await branchOf(fx, "feature")).status).toBe("merged");
    expect(await eventsOf(fx.repo, "com.svc.branch.merged")).toEqual([
      { data: { repo: fx.repo, branch: "feature", sequence: 5, merged_by: fx.owner } },
    ]);
    const created = await eventsOf(fx.repo, "com.svc.commit.created");
    expect(created.at(-1)?.data).toMatchObject({ branch: "main", sequence: 5, file_count: 3 });
  });

  it("merges a branch with no net changes without writing a commit", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    await createBranch(fx, "noop");
    await commit(fx, "noop", { "a.md": "changed" });
    await commit(fx, "noop", { "a.md": "a" });
    expect((await expectMerged(fx, "noop")).sequence).toBe(1);
    expect((await branchOf(fx, "main")).head_sequence).toBe(1);
  });

  it("moves the branch's open proposal to merged and records proposal.merged", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "with-proposal");
    await commit(fx, "with-proposal", { "p.md": "p" });
    const opened = await api(fx.client).post("/repos/:repo*/-/proposals", {
      params: { repo: fx.repo },
      body: { branch: "with-proposal", base_branch: "main", title: "Add p" },
    });
    expectOk(opened, 201);
    const merged = await expectMerged(fx, "with-proposal");
    expect(merged.proposal_id).toBe(opened.body.id);
    const proposal = await api(fx.client).get("/repos/:repo*/-/proposals/:id", {
      params: { repo: fx.repo, id: opened.body.id },
    });
    expect(okBody(proposal).state).toBe("merged");
    expect(await eventsOf(fx.repo, "com.svc.proposal.merged")).toEqual([
      { data: { repo: fx.repo, branch: "with-proposal", base_branch: "main", proposal_id: opened.body.id } },
    ]);
  });

  it("keeps reads of the merged branch answering as before", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "kept");
    const at = await commit(fx, "kept", { "k.md": "kept" });
    const before = await treeOf(fx, "kept", at);
    await expectMerged(fx, "kept");
    await commit(fx, "main", { "later.md": "later" });
    expect(await treeOf(fx, "kept", at)).toEqual(before);
  });
});
