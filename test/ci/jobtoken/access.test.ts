import { beforeAll, describe, expect, it } from "vitest";
import type { JobRow } from "../../../shared/ci/jobs/records.ts";
import { type ApiError, api } from "../../support/api.ts";
import type { Client, Res } from "../../support/client.ts";
import {
  commit,
  errorOf,
  expectOk,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../../support/world.ts";
import { CI_YAML, jobOnFeature, mint, startJobTokenApp } from "./support.ts";

/**
 * What a job OIDC JWT may do on the repo API (SPEC, Authentication 5): read its own repo, report
 * check runs on its job's branch there, and nothing else. Every request goes over HTTP.
 */

const FORBIDDEN_MESSAGE = "a CI job token may only read its repo and report check runs";

let fx: RepoFixture;
let other: RepoFixture;
let job: JobRow;
let jwt: Client;

const app = useFixture(startJobTokenApp);
beforeAll(async () => {
  [fx, other] = await Promise.all([repoWithOwner(app), repoWithOwner(app)]);
  await commit(other, "main", { "docs/secret.md": "# no\n" }, "other first");
  ({ job, jwt } = await jobOnFeature(app, fx));
});

/** Asserts the status and error code of a refusal; returns its error body. */
const expectRefused = (res: Res<unknown>, status: number, code: string): ApiError => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const error = errorOf(res);
  expect(error.code).toBe(code);
  return error;
};

describe("reads", () => {
  it("reads its own repo: tree, branch, file (the CI configuration at the pinned sequence), checks", async () => {
    const tree = await jwt.get(`${fx.base}/tree?branch=feature&at=${job.sequence}`);
    expect(tree.status, JSON.stringify(tree.body)).toBe(200);
    expect(JSON.stringify(tree.body)).toContain("docs/b.md");
    const file = await api(jwt).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: ".svc/ci.yaml" },
      query: { branch: "feature", at: String(job.sequence) },
    });
    expectOk(file, 200);
    expect(Buffer.from(file.body.content, "base64").toString()).toBe(CI_YAML);
    for (const path of [
      `${fx.base}/branch/feature`,
      `${fx.base}/branch/feature/checks`,
      `${fx.base}/branches`,
    ]) {
      const res = await jwt.get(path);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  });

  it("downloads its own repo's archive (the public route that authenticates itself)", async () => {
    const res = await fetch(`${app.url}${fx.base}/archive?branch=feature&at=${job.sequence}`, {
      headers: { authorization: `Bearer ${await mint(app, job)}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    expect(Buffer.from(await res.arrayBuffer()).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
  });

  it("answers 404 REPO_NOT_FOUND for another repo, exactly as for a repo that does not exist", async () => {
    for (const suffix of ["/tree", "/file/docs/secret.md", "/branches", "/archive?branch=main"]) {
      const existing = await jwt.get(`${other.base}${suffix}`);
      const missing = await jwt.get(`/repos/${other.org}/nope/-${suffix}`);
      const existingError = expectRefused(existing, 404, "REPO_NOT_FOUND");
      const missingError = expectRefused(missing, 404, "REPO_NOT_FOUND");
      expect(existingError.error.replace(other.repo, "X")).toBe(
        missingError.error.replace(`${other.org}/nope`, "X"),
      );
    }
  });

  it("gets nothing from a role granted to the identity 'ci-job:<id>' on another repo", async () => {
    await app.sql(
      "INSERT INTO repo_roles (repo_id, identity, role, granted_by) VALUES ($1, $2, 'admin', 'test')",
      [other.repoId, `ci-job:${job.id}`],
    );
    try {
      expectRefused(await jwt.get(`${other.base}/tree`), 404, "REPO_NOT_FOUND");
      expectRefused(await jwt.get(`${other.base}/roles`), 403, "FORBIDDEN");
    } finally {
      await app.sql("DELETE FROM repo_roles WHERE identity = $1", [`ci-job:${job.id}`]);
    }
  });
});

describe("everything but reads and check runs is 403", () => {
  const cases: [string, (c: Client) => Promise<Res>][] = [
    ["list orgs", (c) => c.get("/orgs")],
    ["create an org", (c) => c.post("/orgs", { name: "jobs-org" })],
    ["list repos", (c) => c.get("/repos")],
    ["create a repo", (c) => c.post("/repos", { owner: fx.org, name: `${fx.org}/jobs` })],
    ["list subscriptions", (c) => c.get("/subscriptions")],
    [
      "subscribe",
      (c) =>
        c.post("/subscriptions", { repo: fx.repo, backend: "webhook", config: { url: "https://x.example" } }),
    ],
    ["the global event stream", (c) => c.get("/events")],
    [
      "commit to its branch",
      (c) =>
        c.post(`${fx.base}/commit`, {
          branch: "feature",
          message: "m",
          files: [{ path: "x.md", content: "eA==" }],
        }),
    ],
    ["create a branch", (c) => c.post(`${fx.base}/branch`, { name: "jobs" })],
    ["review", (c) => c.post(`${fx.base}/review`, { branch: "feature", status: "approved", body: "" })],
    ["comment", (c) => c.post(`${fx.base}/comment`, { branch: "feature", path: "docs/b.md", body: "hi" })],
    ["open a proposal", (c) => c.post(`${fx.base}/proposals`, { branch: "feature", title: "t" })],
    ["merge", (c) => c.post(`${fx.base}/merge`, { branch: "feature" })],
    ["rebase", (c) => c.post(`${fx.base}/rebase`, { branch: "feature" })],
    ["list roles (an admin read)", (c) => c.get(`${fx.base}/roles`)],
    ["grant a role", (c) => c.put(`${fx.base}/roles/someone@example.com`, { role: "reader" })],
    ["start a manual CI run", (c) => c.post(`${fx.base}/ci/run`, { branch: "feature" })],
    ["delete the repo", (c) => c.delete(fx.base.replace(/\/-$/, ""))],
    [
      "commit to another repo",
      (c) => c.post(`${other.base}/commit`, { branch: "main", message: "m", files: [] }),
    ],
  ];
  it.each(cases)("%s → 403 FORBIDDEN", async (_, send) => {
    const error = expectRefused(await send(jwt), 403, "FORBIDDEN");
    expect(error.error).toBe(FORBIDDEN_MESSAGE);
  });

  it("changed nothing: no branch, commit, review, comment or proposal by the job", async () => {
    const [row] = await app.sql(
      `SELECT (SELECT count(*)::int FROM branches WHERE repo_id = $1) AS branches,
              (SELECT last_sequence FROM repos WHERE id = $1) AS last_sequence,
              (SELECT count(*)::int FROM orgs WHERE name = 'jobs-org') AS orgs`,
      [fx.repoId],
    );
    expect(row).toEqual({ branches: 2, last_sequence: 2, orgs: 0 });
  });
});

describe("check runs", () => {
  it("reports on its job's branch as ci-job:<job_id>, at the pinned sequence by default", async () => {
    const res = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/lint",
      status: "pending",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      branch: "feature",
      check_name: "docs/lint",
      status: "pending",
      sequence: job.sequence,
      reporter: `ci-job:${job.id}`,
    });
    const [event] = await app.sql(
      "SELECT data FROM events WHERE repo = $1 AND type = 'com.svc.check.reported' ORDER BY position DESC LIMIT 1",
      [fx.repo],
    );
    expect(event?.["data"]).toMatchObject({ reporter: `ci-job:${job.id}`, sequence: job.sequence });
  });

  it("keeps the pinned sequence after the branch has moved on, and refuses to report on any other sequence", async () => {
    const head = await commit(fx, "feature", { "docs/c.md": "# C\n" }, "moves on");
    expect(head).toBeGreaterThan(job.sequence);
    const pinned = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/lint",
      status: "passed",
    });
    expect(pinned.status, JSON.stringify(pinned.body)).toBe(201);
    expect(pinned.body).toMatchObject({ sequence: job.sequence, status: "passed" });
    const explicit = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/spell",
      status: "failed",
      sequence: head,
    });
    expect(explicit.status, JSON.stringify(explicit.body)).toBe(403);
    expect(errorOf(explicit).code).toBe("FORBIDDEN");
    const same = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/spell",
      status: "failed",
      sequence: job.sequence,
    });
    expect(same.status, JSON.stringify(same.body)).toBe(201);
    // A person's report without a sequence still goes to the head.
    const person = await fx.client.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "human",
      status: "passed",
    });
    expect(person.body).toMatchObject({ sequence: head, reporter: fx.owner });
    const listed = await api(fx.client).get("/repos/:repo*/-/branch/:branch*/checks", {
      params: { repo: fx.repo, branch: "feature" },
    });
    expectOk(listed, 200);
    expect(listed.body.check_runs).toContainEqual(
      expect.objectContaining({
        check_name: "docs/lint",
        sequence: job.sequence,
        reporter: `ci-job:${job.id}`,
      }),
    );
  });

  it("may not report on another branch of its repo: 403, nothing recorded", async () => {
    const res = await jwt.post(`${fx.base}/check`, {
      branch: "main",
      check_name: "docs/lint",
      status: "passed",
    });
    expect(expectRefused(res, 403, "FORBIDDEN").error).toContain("'feature'");
    expect(
      await app.sql("SELECT 1 FROM check_runs WHERE reporter = $1 AND sequence = 1", [`ci-job:${job.id}`]),
    ).toEqual([]);
  });

  it("may not report on another repo: 404 as if it did not exist", async () => {
    const res = await jwt.post(`${other.base}/check`, {
      branch: "main",
      check_name: "docs/lint",
      status: "passed",
    });
    expectRefused(res, 404, "REPO_NOT_FOUND");
    expect(await app.sql("SELECT 1 FROM check_runs WHERE repo_id = $1", [other.repoId])).toEqual([]);
  });

  it("still validates the body (a missing check_name is 400)", async () => {
    const res = await jwt.post(`${fx.base}/check`, { branch: "feature", status: "passed" });
    expectRefused(res, 400, "VALIDATION_FAILED");
  });

  it("accepts a token with a check_name claim alike (the claim does not limit which check it reports)", async () => {
    const scoped = app.bearer(await mint(app, job, { check_name: "docs/lint" }));
    const res = await scoped.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/lint",
      status: "passed",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});

describe("ID tokens are unchanged", () => {
  it("a person keeps its own roles, and DEV_IDENTITY still makes everyone that identity", async () => {
    expect((await fx.client.get(`${fx.base}/roles`)).status).toBe(200);
    const dev = await startJobTokenApp({ DEV_IDENTITY: "dev@example.com" });
    try {
      const res = await dev.bearer("not-even-a-jwt").post("/orgs", { name: "devorg" });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    } finally {
      await dev.close();
    }
  });
});
