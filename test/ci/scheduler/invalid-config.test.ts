import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../../support/api.ts";
import { commit, errorOf, expectOk, grant, repoWithOwner, useFixture } from "../../support/world.ts";
import { startCiApp } from "../support.ts";
import { jobsOf, settle } from "./scheduler-support.ts";

/**
 * An invalid `.svc/ci.yaml`: nothing runs; the author learns why from a failed `ci/config` check
 * run on that sequence, reported by the scheduler, whose log lists every problem with its line
 * and column; a manual run is refused with 409 CI_CONFIG_INVALID.
 */

let bad: number;
const READER = "invalid-config-reader@example.com";

// Line 4: a check without an image (4:5). Line 9: no steps (9:12). Line 10: `=` in `if:` (10:20).
const INVALID = [
  "on:",
  "  push:",
  "checks:",
  "  - name: docs/lint",
  "    steps:",
  "      - echo hi",
  "  - name: docs/links",
  "    image: alpine:3.20",
  "    steps: []",
  "    if: event.type = 'push'",
  "",
].join("\n");

const app = useFixture(startCiApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await grant(fx, READER, "reader");
  bad = await commit(fx, "main", { ".svc/ci.yaml": INVALID }, "broken CI");
  await settle(app, fx.repo);
});

/** The ci/config check runs of main. */
async function configChecks() {
  const res = await api(fx.client).get("/repos/:repo*/-/branch/:branch*/checks", {
    params: { repo: fx.repo, branch: "main" },
  });
  expectOk(res, 200);
  return res.body.check_runs.filter((c) => c.check_name === "ci/config");
}

describe("an invalid .svc/ci.yaml", () => {
  it("queues no job for a worker: the queue is empty and the only record is a failed one", async () => {
    const jobs = await jobsOf(app, fx.repo);
    expect(jobs.filter((j) => j.status === "queued")).toEqual([]);
    expect(jobs).toEqual([
      expect.objectContaining({ status: "failed", sequence: bad, checks: [], trigger_type: "push" }),
    ]);
    expect(jobs[0]!.error).toContain("ci/config");
    expect((await app.worker.post("/claim")).status).toBe(204);
  });

  it("posts a failed ci/config check run on that sequence, reported by ci-scheduler, with a log URL", async () => {
    const checks = await configChecks();
    expect(checks).toEqual([
      expect.objectContaining({
        check_name: "ci/config",
        status: "failed",
        sequence: bad,
        reporter: "ci-scheduler",
        log_url: expect.stringMatching(/\/run\/[0-9a-f-]{36}\/logs\/ci\/config$/),
      }),
    ]);
    const [job] = await jobsOf(app, fx.repo);
    expect(checks[0]?.log_url).toBe(`${app.url}/run/${job!.id}/logs/ci/config`);
  });

  it("its log leads a reader (302) to a signed URL that serves every problem with line and column", async () => {
    const [check] = await configChecks();
    const token = await app.idp.token(READER);
    const redirect = await fetch(check!.log_url!, {
      headers: { authorization: `Bearer ${token}` },
      redirect: "manual",
    });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get("location")!;
    expect(new URL(location).searchParams.get("sig")).toMatch(/^[0-9a-f]{64}$/);
    // No credentials on the signed URL: the signature is what lets it through.
    const served = await fetch(location);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await served.text();
    expect(text.trimEnd().split("\n")).toEqual([
      ".svc/ci.yaml:4:5: checks[0].image: is required",
      ".svc/ci.yaml:9:12: checks[1].steps: must list at least one step",
      expect.stringMatching(/^\.svc\/ci\.yaml:10:20: checks\[1\]\.if: .*'='/),
    ]);
  });

  it("its log is not shown to someone who cannot read the repo", async () => {
    const [check] = await configChecks();
    const token = await app.idp.token("stranger@example.com");
    const res = await fetch(check!.log_url!, {
      headers: { authorization: `Bearer ${token}` },
      redirect: "manual",
    });
    expect(res.status).toBe(404);
    expect((await fetch(check!.log_url!, { redirect: "manual" })).status).toBe(401);
  });

  it("a manual run on it is refused with 409 CI_CONFIG_INVALID and queues nothing", async () => {
    const before = await jobsOf(app, fx.repo);
    const res = await api(fx.client).post("/repos/:repo*/-/ci/run", {
      params: { repo: fx.repo },
      body: { branch: "main" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    const refusal = errorOf(res);
    expect(refusal.code).toBe("CI_CONFIG_INVALID");
    expect(refusal.error).toContain("ci/config");
    const after = await jobsOf(app, fx.repo);
    expect(after.filter((j) => j.status === "queued")).toEqual([]);
    // The refused run is recorded as failed at once (its own ci/config log), never queued.
    expect(after.filter((j) => !before.some((b) => b.id === j.id))).toEqual([
      expect.objectContaining({
        id: refusal["run_id"],
        trigger_type: "manual",
        status: "failed",
        sequence: bad,
        created_by: fx.owner,
      }),
    ]);
    expect((await app.worker.post("/claim")).status).toBe(204);
  });
});
