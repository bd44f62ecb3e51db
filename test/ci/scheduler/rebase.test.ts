import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commit, createBranch, type RepoFixture, repoWithOwner } from "../../commits/fixtures.ts";
import { installPolicies, merge, policies } from "../../merge/fixtures.ts";
import { api } from "../../support/api.ts";
import { expectOk, expectStatus } from "../../support/world.ts";
import { type CiApp, ciYaml, startCiApp } from "../support.ts";
import { jobsOf, settle } from "./scheduler-support.ts";

/**
 * A rebase writes a new head on the branch; CI must test it as it tests a push, or a
 * `ci_must_pass` policy can never pass without a manual run. Everything goes through the real
 * outbox, signed deliveries to `/webhook`, and the worker protocol over HTTP.
 */

let app: CiApp;
let fx: RepoFixture;
beforeAll(async () => {
  app = await startCiApp();
  fx = await repoWithOwner(app);
});
afterAll(() => app?.close());

/**
 * Plays the worker for every queued job, as the spec's workflow does: claim, exchange the
 * request token for a job JWT, post each check `passed` with it, complete. Returns the jobs run.
 */
async function passEveryQueuedJob(): Promise<{ branch: string; sequence: number; trigger_type: string }[]> {
  const ran = [];
  for (;;) {
    const claim = await api(app.worker).post("/claim");
    if (claim.status === 204) return ran;
    const job = expectStatus(claim, 200)!;
    const worker = app.bearer(job.request_token);
    for (const check_name of job.checks) {
      const token = await api(worker).post("/ci/token", { body: { audience: "quire", check_name } });
      expectOk(token, 200);
      const posted = await app
        .bearer(token.body.token)
        .post(`${fx.base}/check`, { branch: job.branch, check_name, status: "passed" });
      expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    }
    expect((await worker.post(`/jobs/${job.id}/complete`, { status: "passed" })).status).toBe(200);
    ran.push({ branch: job.branch, sequence: job.sequence, trigger_type: job.trigger_type });
  }
}

describe("CI after a rebase", () => {
  it("queues one push job for the rebased head; once it passes, ci_must_pass allows the merge", async () => {
    await installPolicies(fx, { ci_must_pass: policies.ci_must_pass });
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) }, "add CI");
    await createBranch(fx, "feature");
    await commit(fx, "feature", { "a.md": "a\n" }, "first");
    const oldHead = await commit(fx, "feature", { "b.md": "b\n" }, "second");
    const mainHead = await commit(fx, "main", { "m.md": "m\n" }, "main moves on");
    await settle(app, fx.repo);
    const before = await passEveryQueuedJob();
    expect(before).toContainEqual({ branch: "feature", sequence: oldHead, trigger_type: "push" });
    const jobsBefore = (await jobsOf(app, fx.repo)).length;

    const rebased = await api(fx.client).post("/repos/:repo*/-/rebase", {
      params: { repo: fx.repo },
      body: { branch: "feature" },
    });
    expectOk(rebased, 200);
    const head = rebased.body.new_head_sequence;
    expect(head).toBe(mainHead + 2);
    // The check passed at the old head; the policy judges the new one.
    expect((await merge(fx, "feature")).status).toBe(403);

    // One job, for the new head: not one per replayed commit.
    await settle(app, fx.repo);
    const queued = (await jobsOf(app, fx.repo)).slice(jobsBefore);
    expect(queued).toEqual([
      expect.objectContaining({
        trigger_type: "push",
        trigger_branch: "feature",
        sequence: head,
        status: "queued",
      }),
    ]);
    expect(await passEveryQueuedJob()).toEqual([{ branch: "feature", sequence: head, trigger_type: "push" }]);

    const merged = await merge(fx, "feature");
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
  });
});
