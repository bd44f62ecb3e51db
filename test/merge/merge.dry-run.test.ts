import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commit, createBranch, type RepoFixture, repoWithOwner, snapshot } from "../commits/fixtures.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { installPolicies, policies } from "./fixtures.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const dryRun = (fx: RepoFixture, branch: string) =>
  fx.client.post(`${fx.base}/merge`, { branch, dry_run: true });

/** Everything a merge could change: counters, rows, events, both heads, the proposal's state. */
async function state(fx: RepoFixture, branch: string) {
  return {
    ...(await snapshot(app, fx)),
    main: (await fx.client.get(`${fx.base}/branch/main`)).body,
    branch: (await fx.client.get(`${fx.base}/branch/${branch}`)).body,
    proposals: (await fx.client.get(`${fx.base}/proposals`)).body,
  };
}

describe("a merge with dry_run: true", () => {
  it("answers what the merge would (the sequence and proposal it would produce) and writes nothing", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    await createBranch(fx, "feature");
    await commit(fx, "feature", { "a.md": "changed", "b.md": "b" });
    const opened = await fx.client.post(`${fx.base}/proposals`, { branch: "feature", title: "Feature" });
    expect(opened.status).toBe(201);

    const before = await state(fx, "feature");
    const tried = await dryRun(fx, "feature");
    expect(tried.status, JSON.stringify(tried.body)).toBe(200);
    expect(tried.body).toEqual({
      sequence: 3,
      branch: "feature",
      merged_by: fx.owner,
      proposal_id: opened.body.id,
      dry_run: true,
    });
    expect(await state(fx, "feature")).toEqual(before);

    const merged = await fx.client.post(`${fx.base}/merge`, { branch: "feature" });
    expect(merged.status).toBe(200);
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
    const real = await fx.client.post(`${fx.base}/merge`, { branch: "clash" });
    expect(tried.status).toBe(409);
    expect(tried.body).toEqual(real.body);
    expect(tried.body.conflicts.length).toBeGreaterThan(0);
  });

  it("answers the same 403 with policies as the merge, without recording merge.blocked", async () => {
    const fx = await repoWithOwner(app);
    await installPolicies(fx, { require_review: policies.require_review });
    await createBranch(fx, "gated");
    await commit(fx, "gated", { "g.md": "g" });

    const before = await state(fx, "gated");
    const tried = await dryRun(fx, "gated");
    expect(tried.status).toBe(403);
    expect(tried.body.code).toBe("POLICY_DENIED");
    expect(await state(fx, "gated")).toEqual(before);

    const real = await fx.client.post(`${fx.base}/merge`, { branch: "gated" });
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
    const notBool = await fx.client.post(`${fx.base}/merge`, { branch: "f", dry_run: "yes" });
    expect(notBool.status).toBe(400);
    expect(notBool.body.error).toMatch(/^body\.dry_run: /);
    const rebase = await fx.client.post(`${fx.base}/rebase`, { branch: "f", dry_run: true });
    expect(rebase.status).toBe(400);
    expect(rebase.body.error).toBe("body.dry_run: unknown field");
    expect(await state(fx, "f")).toEqual(before);
  });
});
