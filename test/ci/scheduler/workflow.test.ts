import { createGunzip } from "node:zlib";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { extract } from "tar-stream";
import { describe, expect, it } from "vitest";
import { urlResponse } from "../../../shared/api/ci.ts";
import { api } from "../../support/api.ts";
import { policies } from "../../support/policies.ts";
import {
  commit,
  createBranch,
  expectError,
  expectOk,
  installPolicies,
  repoWithOwner,
  useFixture,
} from "../../support/world.ts";
import { ciYaml, claimWithin, startCiApp } from "../support.ts";

const app = useFixture(startCiApp);
const fx = useFixture(() => repoWithOwner(app));

/** The names of the files in a .tar.gz. */
async function tarNames(data: ArrayBuffer): Promise<string[]> {
  const names: string[] = [];
  const tar = extract();
  tar.on("entry", (header, stream, next) => {
    names.push(header.name);
    stream.on("end", next);
    stream.resume();
  });
  const done = new Promise<void>((resolve, reject) => tar.on("finish", () => resolve()).on("error", reject));
  const gunzip = createGunzip();
  gunzip.pipe(tar);
  gunzip.end(Buffer.from(data));
  await done;
  return names;
}

describe("the whole CI workflow of the spec, over HTTP", () => {
  it("push → queued → claim → token → presign + archive → config with the JWT → checks → log → complete → merge allowed", async () => {
    await installPolicies(fx, { ci_must_pass: policies.ci_must_pass });
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) }, "add CI");
    // The commit that added the file queued a push job on main; take it out of the way.
    const first = await claimWithin(app);
    expect(first.body).toMatchObject({ branch: "main", trigger_type: "push" });
    await app.bearer(first.body.request_token).post(`/jobs/${first.body.id}/complete`, { status: "passed" });
    await createBranch(fx, "feature");
    const head = await commit(fx, "feature", { "notes/a.md": "# A\n" }, "write notes");

    // Without a passing check at the head the policy blocks the merge.
    expect((await fx.client.post(`${fx.base}/merge`, { branch: "feature" })).status).toBe(403);

    // 1. The commit's event reached /webhook (a real signed delivery) and queued a push job.
    const claim = await claimWithin(app);
    const job = claim.body;
    expect(job).toMatchObject({
      repo: fx.repo,
      branch: "feature",
      sequence: head,
      status: "claimed",
      trigger_type: "push",
      trigger_branch: "feature",
      trigger_base_branch: null,
      trigger_proposal_id: null,
      checks: ["docs/lint"],
      attempt: 1,
      claimed_by: "static-token",
    });
    expect(job.request_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(job.oidc_token_url).toBe(`${app.url}/ci/token`);
    const [stored] = await app.sql("SELECT request_token_sha256 FROM ci_jobs WHERE id = $1", [job.id]);
    expect((stored!.request_token_sha256 as Buffer).length).toBe(32);
    const worker = app.bearer(job.request_token);

    // 2. Exchange the request token for a job JWT that outside systems can verify from the JWKS.
    const exchanged = await api(worker).post("/ci/token", {
      body: { audience: "quire", check_name: "docs/lint" },
    });
    expectOk(exchanged, 200);
    const jwks = createRemoteJWKSet(new URL(`${app.url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(exchanged.body.token, jwks, {
      issuer: app.url,
      audience: "quire",
    });
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({
      sub: `repo:${fx.repo}:branch:feature:check:docs/lint`,
      job_id: job.id,
      repo: fx.repo,
      org: fx.org,
      branch: "feature",
      check_name: "docs/lint",
      ref_type: "branch",
      sequence: head,
    });
    expect(payload.exp! - payload.iat!).toBe(3600);
    const audit = await app.sql(
      "SELECT job_id::text, audience, subject FROM ci_token_issuances WHERE jti = $1",
      [payload.jti],
    );
    expect(audit).toEqual([{ job_id: job.id, audience: "quire", subject: payload.sub }]);
    const jwt = app.bearer(exchanged.body.token);

    // 3. A presigned archive URL of exactly the pinned state, downloadable without credentials.
    const presigned = await worker.post(`${fx.base}/archive/presign`);
    expect(presigned.status, JSON.stringify(presigned.body)).toBe(200);
    const url = new URL(urlResponse.parse(presigned.body).url);
    expect(url.searchParams.get("branch")).toBe("feature");
    expect(url.searchParams.get("at")).toBe(String(head));
    const archive = await fetch(url);
    expect(archive.status).toBe(200);
    expect(await tarNames(await archive.arrayBuffer())).toEqual(
      [".svc/ci.yaml", ".svc/policy/ci_must_pass.rego", "notes/a.md"].map((p) => `docs-feature-${head}/${p}`),
    );

    // 4. The configuration, read with the job JWT at the pinned sequence.
    const config = await api(jwt).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: ".svc/ci.yaml" },
      query: { branch: "feature", at: String(head) },
    });
    expectOk(config, 200);
    expect(Buffer.from(config.body.content, "base64").toString()).toContain("docs/lint");

    // 5. Pending, then the log, then the final check run, all as the job.
    const pending = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/lint",
      status: "pending",
    });
    expect(pending.status, JSON.stringify(pending.body)).toBe(201);
    expect(pending.body).toMatchObject({ reporter: `ci-job:${job.id}`, sequence: head, status: "pending" });
    const log = await worker.raw("POST", `${fx.base}/check/docs/lint/logs`, {
      body: "lint: 0 problems\n",
      headers: { "content-type": "text/plain" },
    });
    expect(log.status, JSON.stringify(log.body)).toBe(201);
    const logUrl = urlResponse.parse(log.body).url;
    expect(logUrl).toBe(`${app.url}/run/${job.id}/logs/docs/lint`);
    const passed = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/lint",
      status: "passed",
      log_url: logUrl,
    });
    expect(passed.status, JSON.stringify(passed.body)).toBe(201);

    // 6. Heartbeat and complete; then the request token is spent.
    expect((await worker.post(`/jobs/${job.id}/heartbeat`)).status).toBe(200);
    const completed = await worker.post(`/jobs/${job.id}/complete`, { status: "passed" });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body).toMatchObject({ id: job.id, status: "passed" });
    for (const replay of [
      worker.post(`/jobs/${job.id}/heartbeat`),
      worker.post(`/jobs/${job.id}/complete`, { status: "failed" }),
      worker.post("/ci/token", { audience: "quire" }),
      worker.post(`${fx.base}/archive/presign`),
      worker.raw("POST", `${fx.base}/check/docs/lint/logs`, { body: "again" }),
    ]) {
      expectError(await replay, 401, "UNAUTHENTICATED");
    }

    // 7. The job's status and its log, for a reader of the repo.
    const run = await api(fx.client).get("/run/:id", { params: { id: job.id } });
    expectOk(run, 200);
    expect(run.body).toMatchObject({ id: job.id, status: "passed", trigger_type: "push", sequence: head });
    expect(run.body).not.toHaveProperty("request_token");
    const token = await app.idp.token(fx.owner);
    const redirect = await fetch(`${app.url}/run/${job.id}/logs/docs/lint`, {
      headers: { authorization: `Bearer ${token}` },
      redirect: "manual",
    });
    expect(redirect.status).toBe(302);
    const served = await fetch(redirect.headers.get("location")!);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await served.text()).toBe("lint: 0 problems\n");

    // 8. The check passed at the head: ci_must_pass now lets the merge through.
    const merged = await fx.client.post(`${fx.base}/merge`, { branch: "feature" });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
  });
});
