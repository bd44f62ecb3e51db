import { describe, expect, it } from "vitest";
import { queuedJobsResponse } from "../../../shared/api/ci.ts";
import { api } from "../../support/api.ts";
import {
  commit,
  createBranch,
  expectOk,
  expectStatus,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../../support/world.ts";
import { ciYaml, startCiApp } from "../support.ts";
import { deliver, envelope, eventId, jobsOf, settle, storedEnvelope } from "./scheduler-support.ts";

/**
 * The trigger mapping (SPEC "CI trigger mapping"), end to end: commits and proposals made over
 * HTTP, their events delivered to `/webhook` by the real outbox with a real signature, jobs read
 * back from ci_jobs. Every assertion about what was queued waits for the scheduler to acknowledge
 * every CI event of the repo first (`settle`), so "no job" means none was queued.
 */

const app = useFixture(startCiApp);

/** A fresh repo per test, so each test sees only its own jobs. */
const fresh = (): Promise<RepoFixture> => repoWithOwner(app);

const SCHEDULER = "ci-scheduler";

async function openProposal(fx: RepoFixture, branch: string, base_branch = "main"): Promise<string> {
  const res = await api(fx.client).post("/repos/:repo*/-/proposals", {
    params: { repo: fx.repo },
    body: { branch, base_branch, title: `merge ${branch}` },
  });
  return expectStatus(res, 201).id;
}

describe("push triggers", () => {
  it("a commit on a branch that on.push matches queues one push job pinned to that commit", async () => {
    const fx = await fresh();
    const seq = await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint", "docs/links"]) });
    await settle(app, fx.repo);
    const jobs = await jobsOf(app, fx.repo);
    expect(jobs).toEqual([
      expect.objectContaining({
        trigger_type: "push",
        trigger_branch: "main",
        trigger_base_branch: null,
        trigger_proposal_id: null,
        sequence: seq,
        status: "queued",
        checks: ["docs/lint", "docs/links"],
        created_by: SCHEDULER,
        attempt: 0,
      }),
    ]);
    // The same job through the API: GET /run/{id} for a reader of the repo.
    const run = await fx.client.get(`/run/${jobs[0]!.id}`);
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body).toMatchObject({ repo: fx.repo, branch: "main", sequence: seq, trigger_type: "push" });
  });

  it("on.push.branches [release/**] leaves feature/x alone (acknowledged, no job) and runs release/1/x", async () => {
    const fx = await fresh();
    const on = 'on:\n  push:\n    branches: ["release/**"]\n';
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"], on) });
    await createBranch(fx, "feature/x");
    await createBranch(fx, "release/1/x");
    await commit(fx, "feature/x", { "a.md": "a\n" });
    const release = await commit(fx, "release/1/x", { "b.md": "b\n" });
    await settle(app, fx.repo);
    // main and feature/x were delivered and acknowledged; only release/1/x queued anything.
    const jobs = await jobsOf(app, fx.repo);
    expect(jobs.map((j) => [j.trigger_type, j.trigger_branch, j.sequence])).toEqual([
      ["push", "release/1/x", release],
    ]);
  });

  it("a file with no on block runs on every commit to every branch", async () => {
    const fx = await fresh();
    const checksOnly = ciYaml(["docs/lint"], "");
    expect(checksOnly.startsWith("checks:")).toBe(true);
    const first = await commit(fx, "main", { ".svc/ci.yaml": checksOnly });
    const second = await commit(fx, "main", { "a.md": "a\n" });
    await createBranch(fx, "anything/goes");
    const third = await commit(fx, "anything/goes", { "b.md": "b\n" });
    await settle(app, fx.repo);
    expect((await jobsOf(app, fx.repo)).map((j) => [j.trigger_type, j.trigger_branch, j.sequence])).toEqual([
      ["push", "main", first],
      ["push", "main", second],
      ["push", "anything/goes", third],
    ]);
  });

  it("without .svc/ci.yaml on the branch nothing is queued and no check run is posted", async () => {
    const fx = await fresh();
    await commit(fx, "main", { "README.md": "no CI here\n" });
    await createBranch(fx, "feature");
    await commit(fx, "feature", { "a.md": "a\n" });
    // A file elsewhere in .svc is not a configuration.
    await commit(fx, "feature", { ".svc/ci.yml": ciYaml(["docs/lint"]) });
    await settle(app, fx.repo);
    expect(await jobsOf(app, fx.repo)).toEqual([]);
    expect(
      await app.sql("SELECT id FROM check_runs WHERE repo_id = $1", [fx.repoId]),
      "check runs of a repo without CI",
    ).toEqual([]);
    for (const branch of ["main", "feature"]) {
      const checks = await api(fx.client).get("/repos/:repo*/-/branch/:branch*/checks", {
        params: { repo: fx.repo, branch },
      });
      expectOk(checks, 200);
      expect(checks.body.check_runs).toEqual([]);
    }
  });
});

describe("proposal triggers", () => {
  it("a commit's event that arrives after a proposal was opened on the branch queues no proposal_synchronized: the proposal job tests it", async () => {
    const fx = await fresh();
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) });
    await createBranch(fx, "late");
    const head = await commit(fx, "late", { "a.md": "a\n" });
    await settle(app, fx.repo);
    await openProposal(fx, "late");
    await settle(app, fx.repo);
    // The commit's delivery again, now that the proposal is open (as a late delivery sees it).
    const id = await eventId(app, fx.repo, "com.svc.commit.created", { branch: "late", sequence: head });
    expect((await deliver(app, await storedEnvelope(app, id))).status).toBe(200);
    const atHead = (await jobsOf(app, fx.repo)).filter((j) => j.sequence === head).map((j) => j.trigger_type);
    expect(atHead.sort()).toEqual(["proposal", "push"]);
  });

  it("a commit to a branch with an open proposal queues both push and proposal_synchronized", async () => {
    const fx = await fresh();
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) });
    await createBranch(fx, "topic");
    await commit(fx, "topic", { "a.md": "a\n" });
    await settle(app, fx.repo);
    const proposal = await openProposal(fx, "topic");
    await settle(app, fx.repo);
    const before = (await jobsOf(app, fx.repo)).length;
    const head = await commit(fx, "topic", { "a.md": "a, again\n" });
    await settle(app, fx.repo);
    const atHead = (await jobsOf(app, fx.repo)).filter((j) => j.sequence === head);
    expect((await jobsOf(app, fx.repo)).length).toBe(before + 2);
    expect(atHead).toEqual([
      expect.objectContaining({
        trigger_type: "proposal_synchronized",
        trigger_branch: "topic",
        trigger_base_branch: "main",
        trigger_proposal_id: proposal,
        status: "queued",
        checks: ["docs/lint"],
      }),
      expect.objectContaining({
        trigger_type: "push",
        trigger_branch: "topic",
        trigger_base_branch: null,
        trigger_proposal_id: null,
        status: "queued",
      }),
    ]);
  });

  it("a commit to a branch with an open proposal queues only push when on.proposal is not configured", async () => {
    const fx = await fresh();
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"], "on:\n  push:\n") });
    await createBranch(fx, "topic");
    await commit(fx, "topic", { "a.md": "a\n" });
    await openProposal(fx, "topic");
    const head = await commit(fx, "topic", { "a.md": "a, again\n" });
    await settle(app, fx.repo);
    const atHead = (await jobsOf(app, fx.repo)).filter((j) => j.sequence === head);
    expect(atHead.map((j) => j.trigger_type)).toEqual(["push"]);
  });

  it("proposal.opened with a matching base queues a proposal job pinned to the proposal's head", async () => {
    const fx = await fresh();
    // No push trigger: the only jobs are the proposal's.
    const on = "on:\n  proposal:\n    base_branches: [main]\n";
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"], on) });
    await createBranch(fx, "topic");
    const head = await commit(fx, "topic", { "a.md": "a\n" });
    // The commit's delivery is acknowledged before the proposal opens: a delivery that arrives
    // after the proposal opened would see it open and also queue proposal_synchronized.
    await settle(app, fx.repo);
    const proposal = await openProposal(fx, "topic");
    await settle(app, fx.repo);
    // A later commit moves the branch; the proposal job stays pinned where the proposal opened.
    const later = await commit(fx, "topic", { "a.md": "a, later\n" });
    await settle(app, fx.repo);
    const jobs = await jobsOf(app, fx.repo);
    expect(jobs).toEqual([
      expect.objectContaining({
        trigger_type: "proposal",
        trigger_branch: "topic",
        trigger_base_branch: "main",
        trigger_proposal_id: proposal,
        sequence: head,
        status: "queued",
        checks: ["docs/lint"],
        created_by: SCHEDULER,
      }),
      expect.objectContaining({ trigger_type: "proposal_synchronized", sequence: later }),
    ]);
  });

  it("proposal.opened with a base that on.proposal.base_branches does not match queues nothing", async () => {
    const fx = await fresh();
    const on = "on:\n  proposal:\n    base_branches: [main]\n";
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"], on) });
    await createBranch(fx, "staging");
    await createBranch(fx, "topic");
    await commit(fx, "topic", { "a.md": "a\n" });
    await openProposal(fx, "topic", "staging");
    // A commit on the branch with its open proposal to staging: not synchronized either.
    await commit(fx, "topic", { "a.md": "a, again\n" });
    await settle(app, fx.repo);
    expect(await jobsOf(app, fx.repo)).toEqual([]);
  });

  it("proposal.closed and proposal.merged queue nothing, whether the outbox or anyone delivers them", async () => {
    const fx = await fresh();
    const on = "on:\n  proposal:\n    base_branches: [main]\n";
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"], on) });
    await createBranch(fx, "closing");
    await createBranch(fx, "merging");
    await commit(fx, "closing", { "c.md": "c\n" });
    await commit(fx, "merging", { "m.md": "m\n" });
    await settle(app, fx.repo);
    const closing = await openProposal(fx, "closing");
    const merging = await openProposal(fx, "merging");
    await settle(app, fx.repo);
    const opened = await jobsOf(app, fx.repo);
    expect(opened.map((j) => j.trigger_type)).toEqual(["proposal", "proposal"]);

    expect((await fx.client.post(`${fx.base}/proposals/${closing}/close`)).status).toBe(200);
    const merged = await fx.client.post(`${fx.base}/merge`, { branch: "merging" });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    await settle(app, fx.repo);
    expect(await jobsOf(app, fx.repo)).toEqual(opened);

    const closedEvent = await eventId(app, fx.repo, "com.svc.proposal.closed", { proposal_id: closing });
    const mergedEvent = await eventId(app, fx.repo, "com.svc.proposal.merged", { proposal_id: merging });
    // The subscription does not even carry them...
    expect(
      await app.sql("SELECT id FROM webhook_outbox WHERE event_id = ANY ($1::uuid[])", [
        [closedEvent, mergedEvent],
      ]),
    ).toEqual([]);
    // ...and delivered by hand, correctly signed, they are acknowledged and queue nothing.
    for (const id of [closedEvent, mergedEvent]) {
      const res = await deliver(app, await storedEnvelope(app, id));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ jobs: [] });
    }
    expect(await jobsOf(app, fx.repo)).toEqual(opened);
  });
});

describe("if: conditions", () => {
  it("checks whose if: is false are left out of the job's checks", async () => {
    const fx = await fresh();
    const yaml = [
      "on:\n  push:\n  proposal:\n",
      "checks:\n",
      "  - name: always\n    image: alpine:3.20\n    steps: [echo always]\n",
      "  - name: proposals/only\n    image: alpine:3.20\n    steps: [echo p]\n",
      "    if: event.type == 'proposal' || event.type == 'proposal_synchronized'\n",
      "  - name: main/only\n    image: alpine:3.20\n    steps: [echo m]\n",
      '    if: event.branch == "main"\n',
      "  - name: empty/if\n    image: alpine:3.20\n    steps: [echo e]\n    if: ''\n",
    ].join("");
    const onMain = await commit(fx, "main", { ".svc/ci.yaml": yaml });
    await createBranch(fx, "topic");
    const onTopic = await commit(fx, "topic", { "a.md": "a\n" });
    await settle(app, fx.repo);
    const proposal = await openProposal(fx, "topic");
    await settle(app, fx.repo);
    expect(
      (await jobsOf(app, fx.repo)).map((j) => [
        j.trigger_type,
        j.trigger_branch,
        j.sequence,
        j.trigger_proposal_id,
        j.checks,
      ]),
    ).toEqual([
      ["push", "main", onMain, null, ["always", "main/only", "empty/if"]],
      ["proposal", "topic", onTopic, proposal, ["always", "proposals/only", "empty/if"]],
      ["push", "topic", onTopic, null, ["always", "empty/if"]],
    ]);
  });

  it("a trigger whose every check is skipped queues no job", async () => {
    const fx = await fresh();
    const yaml = [
      "checks:\n",
      "  - name: manual/only\n    image: alpine:3.20\n    steps: [echo m]\n",
      "    if: event.type == 'manual'\n",
    ].join("");
    await commit(fx, "main", { ".svc/ci.yaml": yaml });
    await commit(fx, "main", { "a.md": "a\n" });
    await settle(app, fx.repo);
    expect(await jobsOf(app, fx.repo)).toEqual([]);
    // The file is valid and the check exists: a manual run gets it.
    const run = await fx.client.post(`${fx.base}/ci/run`, { branch: "main" });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    expect((await jobsOf(app, fx.repo)).map((j) => [j.trigger_type, j.checks])).toEqual([
      ["manual", ["manual/only"]],
    ]);
  });
});

describe("the configuration is read from the branch under test at the pinned sequence", () => {
  it("a later commit changing ci.yaml does not change an earlier job", async () => {
    const fx = await fresh();
    const v1 = await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["first"]) });
    const v2 = await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["second"]) });
    await settle(app, fx.repo);
    expect((await jobsOf(app, fx.repo)).map((j) => [j.sequence, j.checks])).toEqual([
      [v1, ["first"]],
      [v2, ["second"]],
    ]);
    // A delivery naming v1 that arrives only now (a fresh event id: nothing deduplicates it)
    // still reads the file as it was at v1, not main's head.
    const late = await deliver(
      app,
      envelope("com.svc.commit.created", { repo: fx.repo, branch: "main", sequence: v1 }),
    );
    expect(late.status, JSON.stringify(late.body)).toBe(200);
    expect(late.body).toEqual({ jobs: [{ id: expect.any(String), trigger_type: "push" }] });
    const lateId = queuedJobsResponse.parse(late.body).jobs[0]?.id;
    const [job] = (await jobsOf(app, fx.repo)).filter((j) => j.id === lateId);
    expect(job).toMatchObject({ sequence: v1, checks: ["first"] });
  });

  it("a branch's own ci.yaml decides, not main's", async () => {
    const fx = await fresh();
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["main/check"]) });
    await createBranch(fx, "topic");
    const own = await commit(fx, "topic", { ".svc/ci.yaml": ciYaml(["topic/check"]) });
    // On topic, a file without any on.push match; main's file would run it.
    const off = await commit(fx, "topic", {
      ".svc/ci.yaml": ciYaml(["topic/check"], 'on:\n  push:\n    branches: ["main"]\n'),
    });
    await settle(app, fx.repo);
    const topicJobs = (await jobsOf(app, fx.repo)).filter((j) => j.trigger_branch === "topic");
    expect(topicJobs.map((j) => [j.sequence, j.checks])).toEqual([[own, ["topic/check"]]]);
    expect(off).toBeGreaterThan(own);
  });
});
