import { beforeAll, describe, expect, it } from "vitest";
import { api, unchecked } from "../../support/api.ts";
import type { Client } from "../../support/client.ts";
import {
  commit,
  createBranch,
  errorOf,
  expectOk,
  grant,
  repoWithOwner,
  useFixture,
} from "../../support/world.ts";
import { ciYaml, startCiApp } from "../support.ts";
import { jobsOf, settle } from "./scheduler-support.ts";

/**
 * `POST /repos/{name}/-/ci/run` (SPEC "CI manual run"): a writer or higher queues a `manual` job
 * of a branch at its head, whatever the `on` block says; everyone else, and every request that
 * cannot run, gets an error and queues nothing.
 */

let head: number;
const WRITER = "manual-writer@example.com";
const READER = "manual-reader@example.com";
// No trigger matches any branch of this repo: only manual runs queue anything.
const NEVER = "on:\n  push:\n    branches: [nope]\n";

const app = useFixture(startCiApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await grant(fx, WRITER, "writer");
  await grant(fx, READER, "reader");
  await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint", "docs/links"], NEVER) });
  head = await commit(fx, "main", { "a.md": "a\n" });
  await settle(app, fx.repo);
});

/** `POST /repos/{name}/-/ci/run` of `branch` of `repo`, as `client`. */
const runAs = (client: Client, branch: string, repo = fx.repo) =>
  api(client).post("/repos/:repo*/-/ci/run", { params: { repo }, body: { branch } });

const queued = async () => (await jobsOf(app, fx.repo)).filter((j) => j.status === "queued");

describe("manual CI runs", () => {
  it("the on block queued nothing on its own", async () => {
    expect(await jobsOf(app, fx.repo)).toEqual([]);
  });

  it("a writer gets 201 {run_id}: a manual job on the branch at its head, ignoring on", async () => {
    const res = await runAs(app.as(WRITER), "main");
    expectOk(res, 201);
    expect(Object.keys(res.body)).toEqual(["run_id"]);
    expect(res.body.run_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const run = await api(app.as(READER)).get("/run/:id", { params: { id: res.body.run_id } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body).toMatchObject({
      id: res.body.run_id,
      repo: fx.repo,
      branch: "main",
      sequence: head,
      status: "queued",
      trigger_type: "manual",
      trigger_branch: "main",
      trigger_base_branch: null,
      trigger_proposal_id: null,
      checks: ["docs/lint", "docs/links"],
      created_by: WRITER,
    });
  });

  it("each manual run is its own job, on any branch, pinned to that branch's head", async () => {
    await createBranch(fx, "feature/x");
    const featureHead = await commit(fx, "feature/x", { "f.md": "f\n" });
    const first = await runAs(fx.client, "feature/x");
    const second = await runAs(fx.client, "feature/x");
    expect([first.status, second.status]).toEqual([201, 201]);
    expectOk(first, 201);
    expectOk(second, 201);
    expect(first.body.run_id).not.toBe(second.body.run_id);
    const jobs = (await jobsOf(app, fx.repo)).filter((j) => j.trigger_branch === "feature/x");
    expect(jobs.map((j) => [j.id, j.trigger_type, j.sequence, j.created_by]).sort()).toEqual(
      [
        [first.body.run_id, "manual", featureHead, fx.owner],
        [second.body.run_id, "manual", featureHead, fx.owner],
      ].sort(),
    );
  });

  it("a reader gets 403 and nothing is queued", async () => {
    const before = await queued();
    const res = await runAs(app.as(READER), "main");
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(await queued()).toEqual(before);
    // Nor can someone without any role on the repo (it is not even visible to them).
    const stranger = await runAs(app.as("manual-stranger@example.com"), "main");
    expect(stranger.status).toBe(404);
    expect((await runAs(app.anonymous, "main")).status).toBe(401);
    expect(await queued()).toEqual(before);
  });

  it("a branch without .svc/ci.yaml is 409 CI_NOT_CONFIGURED", async () => {
    const other = await repoWithOwner(app);
    await commit(other, "main", { "README.md": "no CI\n" });
    const res = await runAs(other.client, "main", other.repo);
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(errorOf(res).code).toBe("CI_NOT_CONFIGURED");
    expect(await jobsOf(app, other.repo)).toEqual([]);
  });

  it("an unknown branch is 404", async () => {
    const before = await queued();
    const res = await runAs(fx.client, "no-such-branch");
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect(errorOf(res).code).toBe("BRANCH_NOT_FOUND");
    expect(await queued()).toEqual(before);
  });

  it.each([
    ["no body", undefined],
    ["an empty object", {}],
    ["a branch that is not a string", { branch: 5 }],
    ["an invalid branch name", { branch: "../main" }],
    ["an unknown field", { branch: "main", sequence: 1 }],
    ["a list", ["main"]],
  ])("a bad body (%s) is 400 and queues nothing", async (_what, body) => {
    const before = await queued();
    const res = await unchecked(fx.client).post("/repos/:repo*/-/ci/run", {
      params: { repo: fx.repo },
      body,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(errorOf(res).code).toBe("VALIDATION_FAILED");
    expect(await queued()).toEqual(before);
  });

  it("malformed JSON is 400 and queues nothing", async () => {
    const before = await queued();
    const res = await fx.client.raw("POST", `${fx.base}/ci/run`, {
      body: "{branch:",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(await queued()).toEqual(before);
  });

  it("an abandoned branch is 409 and queues nothing", async () => {
    await createBranch(fx, "dropped");
    await commit(fx, "dropped", { "d.md": "d\n" });
    expect((await fx.client.delete(`${fx.base}/branch/dropped`)).status).toBe(204);
    const before = await queued();
    const res = await runAs(fx.client, "dropped");
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(errorOf(res).code).toBe("BRANCH_NOT_ACTIVE");
    expect(await queued()).toEqual(before);
  });

  it("a configuration whose every check is skipped for a manual run is 409 and queues nothing", async () => {
    await createBranch(fx, "pushes-only");
    const yaml =
      "checks:\n  - name: p\n    image: alpine:3.20\n    steps: [echo p]\n    if: event.type == 'push'\n";
    await commit(fx, "pushes-only", { ".svc/ci.yaml": yaml });
    await settle(app, fx.repo);
    const before = await jobsOf(app, fx.repo);
    const res = await runAs(fx.client, "pushes-only");
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(errorOf(res).code).toBe("CI_NOTHING_TO_RUN");
    expect(await jobsOf(app, fx.repo)).toEqual(before);
  });
});
