import { randomBytes } from "node:crypto";
import { Storage } from "@google-cloud/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { urlResponse } from "../../../shared/api/ci.ts";
import { api } from "../../support/api.ts";
import { startFakeGcs } from "../../support/fake-gcs.ts";
import { commit, expectStatus, type RepoFixture, repoWithOwner, useFixture } from "../../support/world.ts";
import { type CiApp, ciYaml, claimWithin, startCiApp } from "../support.ts";

let bucket: string;
let app: CiApp;
let fx: RepoFixture;
const gcs = useFixture(startFakeGcs);
beforeAll(async () => {
  bucket = `ci-logs-${randomBytes(5).toString("hex")}`;
  await new Storage({ apiEndpoint: gcs.url, projectId: "test" }).createBucket(bucket);
  app = await startCiApp({
    SVC_CI_LOG_STORE: "gcs",
    SVC_CI_LOG_BUCKET: bucket,
    STORAGE_EMULATOR_HOST: gcs.url,
  });
  fx = await repoWithOwner(app);
  await commit(fx, "main", {
    ".svc/ci.yaml": ciYaml(["docs/lint", "docs/build"], "on:\n  push:\n    branches: [nothing]\n"),
  });
});
afterAll(async () => {
  await app?.close();
});

/** A job claimed through a manual run, and a client holding its request token. */
async function claimedJob() {
  const run = await api(fx.client).post("/repos/:repo*/-/ci/run", {
    params: { repo: fx.repo },
    body: { branch: "main" },
  });
  const { run_id } = expectStatus(run, 201);
  const claim = await claimWithin(app);
  expect(claim.body.id).toBe(run_id);
  return { id: run_id, worker: app.bearer(claim.body.request_token) };
}

const objects = async () =>
  (await new Storage({ apiEndpoint: gcs.url, projectId: "test" }).bucket(bucket).getFiles())[0].map(
    (f) => f.name,
  );

async function openLog(path: string, token: string | null) {
  return fetch(`${app.url}${path}`, {
    redirect: "manual",
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

describe("check logs in a GCS bucket (fake-gcs-server)", () => {
  it("stores a log, replaces it on a second upload (the old object goes), and serves it through the signed redirect", async () => {
    const { id, worker } = await claimedJob();
    const first = await worker.raw("POST", `${fx.base}/check/docs/lint/logs`, { body: "first run\n" });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const second = await worker.raw("POST", `${fx.base}/check/docs/lint/logs`, {
      body: "<script>alert(1)</script>\n",
      headers: { "content-type": "text/html" },
    });
    const url = urlResponse.parse(first.body).url;
    expect(urlResponse.parse(second.body).url).toBe(url);
    const keys = (await objects()).filter((k) => k.startsWith(`ci-logs/${id}/`));
    expect(keys).toHaveLength(1);

    const owner = await app.idp.token(fx.owner);
    const redirect = await openLog(new URL(url).pathname, owner);
    expect(redirect.status).toBe(302);
    const signed = new URL(redirect.headers.get("location")!);
    const served = await fetch(signed);
    expect(served.status).toBe(200);
    // Never as HTML, whatever the worker said: the log would run script on this origin.
    expect(served.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await served.text()).toBe("<script>alert(1)</script>\n");

    // A tampered signature, another check under the same signature, and an expired URL: 403.
    const tampered = new URL(signed);
    tampered.searchParams.set("sig", "0".repeat(64));
    expect((await fetch(tampered)).status).toBe(403);
    const elsewhere = new URL(signed.toString().replace("/docs/lint?", "/docs/build?"));
    expect((await fetch(elsewhere)).status).toBe(403);
    app.clock.advance(16 * 60_000);
    const expired = await fetch(signed);
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as { code: string }).code).toBe("URL_EXPIRED");
  });

  it("keeps a running check's log so far (partial), replaced by the whole log, and caps partial uploads", async () => {
    const { id, worker } = await claimedJob();
    const upload = (body: string, partial: boolean) =>
      worker.raw("POST", `${fx.base}/check/docs/build/logs${partial ? "?partial=true" : ""}`, { body });
    const owner = await app.idp.token(fx.owner);
    const read = async () => {
      const redirect = await openLog(`/run/${id}/logs/docs/build`, owner);
      return (await fetch(redirect.headers.get("location") ?? "")).text();
    };
    const stored = () =>
      app.sql<{ final: boolean }>(
        "SELECT final FROM ci_logs WHERE job_id = $1 AND check_name = 'docs/build'",
        [id],
      );
    expect((await upload("line 1\n", true)).status).toBe(201);
    expect(await read()).toBe("line 1\n");
    expect(await stored()).toEqual([{ final: false }]);
    // A partial upload reports nothing: the check has no run, let alone a finished one.
    const checks = await app.sql("SELECT 1 FROM check_runs WHERE check_name = 'docs/build'");
    expect(checks).toEqual([]);

    // The cap: 40 partial uploads a minute; the 41st is refused and the log so far kept.
    for (let i = 2; i <= 40; i++) expect((await upload(`line ${i}\n`, true)).status).toBe(201);
    const limited = await upload("line 41\n", true);
    expect(limited.status).toBe(429);
    expect((limited.body as { code: string }).code).toBe("LOG_UPLOADS_LIMITED");
    expect(await read()).toBe("line 40\n");
    app.clock.advance(61_000);
    expect((await upload("line 41\n", true)).status).toBe(201);

    // The whole log replaces it; a late partial upload cannot replace the whole log.
    expect((await upload("whole\n", false)).status).toBe(201);
    const late = await upload("late\n", true);
    expect(late.status).toBe(409);
    expect((late.body as { code: string }).code).toBe("LOG_FINAL");
    expect(await read()).toBe("whole\n");
    expect(await stored()).toEqual([{ final: true }]);
    // The whole log of an earlier attempt (the reaper re-queued the job): the next attempt streams over it.
    await app.sql("UPDATE ci_logs SET attempt = attempt - 1 WHERE job_id = $1", [id]);
    expect((await upload("attempt 2\n", true)).status).toBe(201);
    expect(await read()).toBe("attempt 2\n");
    expect((await upload("whole\n", false)).status).toBe(201);
    expect((await objects()).filter((k) => k.startsWith(`ci-logs/${id}/`))).toHaveLength(1);
    const bad = await worker.raw("POST", `${fx.base}/check/docs/build/logs?partial=yes`, { body: "x" });
    expect(bad.status).toBe(400);
  });

  it("answers the proxy only to readers of the job's repo, and 404 for a log never uploaded", async () => {
    const { id, worker } = await claimedJob();
    await worker.raw("POST", `${fx.base}/check/docs/lint/logs`, { body: "ok\n" });
    const path = `/run/${id}/logs/docs/lint`;
    expect((await openLog(path, null)).status).toBe(401);
    const stranger = await openLog(path, await app.idp.token("stranger@example.com"));
    expect(stranger.status).toBe(404);
    expect(((await stranger.json()) as { code: string }).code).toBe("JOB_NOT_FOUND");
    const missing = await openLog(`/run/${id}/logs/docs/build`, await app.idp.token(fx.owner));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe("LOG_NOT_FOUND");
    expect((await app.as("stranger@example.com").get(`/run/${id}`)).status).toBe(404);
  });

  it("refuses a log upload without a live request token, or for another repo", async () => {
    const { worker } = await claimedJob();
    const other = await repoWithOwner(app);
    const foreign = await worker.raw("POST", `${other.base}/check/docs/lint/logs`, { body: "x" });
    expect(foreign.status).toBe(403);
    expect((await app.anonymous.raw("POST", `${fx.base}/check/docs/lint/logs`, { body: "x" })).status).toBe(
      401,
    );
    const idToken = await app.as(fx.owner).raw("POST", `${fx.base}/check/docs/lint/logs`, { body: "x" });
    expect(idToken.status).toBe(401);
  });
});
