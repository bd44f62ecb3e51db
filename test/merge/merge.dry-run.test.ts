import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commit, createBranch, type RepoFixture, repoWithOwner, snapshot } from "../commits/fixtures.ts";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { errorOf, expectError, expectOk } from "../support/world.ts";
import { branchOf, installPolicies, merge, policies } from "./fixtures.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const dryRun = (fx: RepoFixture, branch: string) => merge(fx, branch, true);

/** Everything a merge could change: counters, rows, events, both heads, the proposal's state. */
async function state(fx: RepoFixture, branch: string) {
  return {
    ...(await snapshot(app, fx)),
    main: await branchOf(fx, "main"),
    branch: await branchOf(fx, branch),
    proposals: okBody(await api(fx.client).get("/repos/:repo*/-/proposals", { params: { repo: fx.repo } })),
  };
}

describe("a merge with dry_run: true", () => {
  it("answers what the merge would (the sequence and proposal it would produce) and writes nothing", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    await createBranch(fx, "feature");
    await commit(fx, "feature", { "a.md": "changed", "b.md": "b" });
    const opened = await api(fx.client).post("/repos/:repo*/-/proposals", {
      params: { repo: fx.repo },
      body: { branch: "feature", title: "Feature" },
    });
    expectOk(opened, 201);

    const before = await state(fx, "feature");
    const tried = await dryRun(fx, "feature");
    expectOk(tried, 200);
    expect(tried.body).toEqual({
      sequence: 3,
      branch: "feature",
      merged_by: fx.owner,
      proposal_id: opened.body.id,
      dry_run: true,
    });
    expect(await state(fx, "feature")).toEqual(before);

    const merged = await merge(fx, "feature");
    expectOk(merged, 200);
    expect(merged.body).toEqual({ ...tried.body, dry_run: false });
  });

  it("answers the same 409 with conflicts as the merge, and changes nothing", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    await createBranch(fx, "clash");
    await commit(fx, "clash", { "a.md": "branch" });
    await commit(fx, "main", { "a.md": "main" });

    const before = await state(fx, "clash");
    const tried = await dryRun(fx, "clash");
    expect(await state(fx, "clash")).toEqual(before);
    const real = await merge(fx, "clash");
    expectError(tried, 409, "MERGE_CONFLICT");
    expect(tried.body).toEqual(real.body);
    expect(errorOf(tried).conflicts).toEqual([expect.objectContaining({ path: "a.md" })]);
  });

  it("answers the same 403 with policies as the merge, without recording merge.blocked", async () => {
    const fx = await repoWithOwner(app);
    await installPolicies(fx, { require_review: policies.require_review });
    await createBranch(fx, "gated");
    await commit(fx, "gated", { "g.md": "g" });

    const before = await state(fx, "gated");
    const tried = await dryRun(fx, "gated");
    expectError(tried, 403, "POLICY_DENIED");
    expect(await state(fx, "gated")).toEqual(before);

    const real = await merge(fx, "gated");
    expect(real.body).toEqual(tried.body);
    const blocked = await app.sql("SELECT 1 FROM events WHERE repo = $1 AND type = $2", [
      fx.repo,
      "com.svc.merge.blocked",
    ]);
    expect(blocked).toHaveLength(1);
  });

  it("refuses a dry_run that is not a boolean, and a dry_run on rebase, naming it", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "f");
    await commit(fx, "f", { "f.md": "f" });
    const before = await state(fx, "f");
    const notBool = await unchecked(fx.client).post("/repos/:repo*/-/merge", {
      params: { repo: fx.repo },
      body: { branch: "f", dry_run: "yes" },
    });
    expect(expectError(notBool, 400, "VALIDATION_FAILED")).toMatch(/^body\.dry_run: /);
    const rebase = await unchecked(fx.client).post("/repos/:repo*/-/rebase", {
      params: { repo: fx.repo },
      body: { branch: "f", dry_run: true },
    });
    expect(expectError(rebase, 400, "VALIDATION_FAILED")).toBe("body.dry_run: unknown field");
    expect(await state(fx, "f")).toEqual(before);
  });
});
