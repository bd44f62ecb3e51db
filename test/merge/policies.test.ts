import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import {
  commit,
  createBranch,
  errorOf,
  expectError,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";
import { installPolicies, merge, policies, statusOf } from "./fixtures.ts";

const app = useFixture(startTestApp);

const REVIEWER = "reviewer@example.com";

const grantWriter = (fx: RepoFixture) =>
  api(fx.client).put("/repos/:repo*/-/roles/:identity", {
    params: { repo: fx.repo, identity: REVIEWER },
    body: { role: "writer" },
  });

const approve = (fx: RepoFixture, branch: string) =>
  api(app.as(REVIEWER)).post("/repos/:repo*/-/review", {
    params: { repo: fx.repo },
    body: { branch, status: "approved", body: "ok" },
  });

describe("merge policies", () => {
  it("with no policy files, a branch is mergeable with policies []", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "free");
    expect(await statusOf(fx, "free")).toEqual({
      mergeable: true,
      policies: [],
      conflicts: [],
      owners: { paths: [], invalid_lines: [] },
      auto_merge: false,
    });
  });

  it("require_review and ci_must_pass block until a review and a passing check at the head, then allow", async () => {
    const fx = await repoWithOwner(app);
    await installPolicies(fx, {
      require_review: policies.require_review,
      ci_must_pass: policies.ci_must_pass,
    });
    await grantWriter(fx);
    await createBranch(fx, "gated");
    const head = await commit(fx, "gated", { "g.md": "gated" });

    const before = await snapshot(app, fx);
    const denied = await merge(fx, "gated");
    expectError(denied, 403, "POLICY_DENIED");
    expect(errorOf(denied).policies).toEqual([
      { name: "ci_must_pass", pass: false, reason: "every check must pass at the head" },
      { name: "require_review", pass: false, reason: "needs an approving review at the head" },
    ]);
    const after = await snapshot(app, fx);
    expect({ ...after, events: Number(after.events) - 1 }).toEqual(before);
    const [blocked] = await app.sql(
      "SELECT data FROM events WHERE repo = $1 AND type = 'com.svc.merge.blocked'",
      [fx.repo],
    );
    expect(blocked?.data).toEqual({
      repo: fx.repo,
      branch: "gated",
      actor: fx.owner,
      policies: ["ci_must_pass", "require_review"],
    });

    expect((await approve(fx, "gated")).status).toBe(201);
    const check = await api(fx.client).post("/repos/:repo*/-/check", {
      params: { repo: fx.repo },
      body: { branch: "gated", check_name: "ci/test", status: "passed", sequence: head },
    });
    expect(check.status).toBe(201);
    expect((await statusOf(fx, "gated")).mergeable).toBe(true);
    expect((await merge(fx, "gated")).status).toBe(200);
  });

  it("counts only reviews and checks at the current head: a new commit needs them again", async () => {
    const fx = await repoWithOwner(app);
    await installPolicies(fx, { require_review: policies.require_review });
    await grantWriter(fx);
    await createBranch(fx, "moving");
    await commit(fx, "moving", { "m.md": "1" });
    expect((await approve(fx, "moving")).status).toBe(201);
    await commit(fx, "moving", { "m.md": "2" });
    const status = await statusOf(fx, "moving");
    expect(status.mergeable).toBe(false);
    expect(status.policies[0]).toMatchObject({ name: "require_review", pass: false });
  });

  it("a policy on input.proposal allows only with an open proposal", async () => {
    const fx = await repoWithOwner(app);
    await installPolicies(fx, { proposal_required: policies.proposal_required });
    await createBranch(fx, "p");
    expect((await merge(fx, "p")).status).toBe(403);
    await api(fx.client).post("/repos/:repo*/-/proposals", {
      params: { repo: fx.repo },
      body: { branch: "p", base_branch: "main", title: "Do p" },
    });
    const res = await merge(fx, "p");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it("fails closed: a policy that does not compile blocks the merge with a reason that says so", async () => {
    const fx = await repoWithOwner(app);
    await installPolicies(fx, { broken: "package svc.policy.broken\n\nallow if {" });
    await createBranch(fx, "b");
    const status = await statusOf(fx, "b");
    expect(status.mergeable).toBe(false);
    expect(status.policies).toEqual([
      { name: "broken", pass: false, reason: expect.stringMatching(/compile/) },
    ]);
    expect((await merge(fx, "b")).status).toBe(403);
  });

  it("reports conflicts in the status without merging", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "c.md": "base" });
    await createBranch(fx, "c");
    await commit(fx, "c", { "c.md": "branch" });
    await commit(fx, "main", { "c.md": "main" });
    expect(await statusOf(fx, "c")).toMatchObject({
      mergeable: false,
      policies: [],
      conflicts: [{ path: "c.md" }],
    });
  });
});
