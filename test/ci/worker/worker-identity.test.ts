import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_POD_AGE_MS, workerVerifierFromConfig } from "../../../shared/ci/worker/index.ts";
import { type Clock, ManualClock } from "../../../shared/clock.ts";
import { loadConfig } from "../../../shared/config.ts";
import { DomainError } from "../../../shared/errors.ts";
import { createLogger } from "../../../shared/log.ts";
import { startFakeKubernetes } from "../../support/k8s-fake.ts";
import { freePort } from "../../support/ports.ts";
import { useFixture } from "../../support/world.ts";

const STATIC_TOKEN = "local-worker-token-0123456789";

/** A logger that keeps its JSON lines, to read the precise reason a refusal logged. */
function recordingLog() {
  const lines: Array<Record<string, unknown>> = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString("utf8").split("\n")) if (l !== "") lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger({ format: "json", level: "warn" }, out), lines };
}

function verifierFor(env: Record<string, string>, deps: { clock?: Clock; timeoutMs?: number } = {}) {
  const { log, lines } = recordingLog();
  return { verifier: workerVerifierFromConfig(loadConfig(env), log, deps), lines };
}

/** The error a promise rejects with; fails the test if it resolves. */
async function rejection(p: Promise<unknown>): Promise<DomainError> {
  const outcome = await p.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  if (outcome.ok) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.v)}`);
  if (!(outcome.e instanceof DomainError)) throw outcome.e;
  return outcome.e;
}

let k8s: () => ReturnType<typeof verifierFor>;
const fake = useFixture(startFakeKubernetes);
beforeAll(async () => {
  k8s = () => verifierFor({ SVC_CI_K8S_API_URL: fake.url, SVC_CI_K8S_TOKEN: fake.schedulerToken });
});
afterEach(() => {
  fake.outage = undefined;
  fake.stall = false;
});

/** Verifies `authorization` and expects a 401 whose logged reason matches `reason`. */
async function expectRefused(authorization: string | undefined, reason: RegExp, v = k8s()) {
  const err = await rejection(v.verifier.verify(authorization));
  expect(err.code).toBe("UNAUTHENTICATED");
  expect(err.status).toBe(401);
  // The worker learns nothing about which check failed.
  expect(err.message).toBe("the worker credential was not accepted");
  expect(v.lines.at(-1)).toMatchObject({ severity: "WARNING", message: "worker claim refused" });
  expect(String(v.lines.at(-1)?.["reason"])).toMatch(reason);
  // The token never reaches the log.
  const secret = authorization?.replace(/^\S+ +/, "") ?? "";
  if (secret.length >= 8) expect(JSON.stringify(v.lines)).not.toContain(secret);
  return v.lines.at(-1)!;
}

describe("Kubernetes worker identity", () => {
  it("accepts the projected token of a ci-worker pod of the CronJob ci-worker", async () => {
    const token = fake.addWorkerPod({ name: "ci-worker-28391-abcde" });
    const start = fake.requests.length;
    expect(await k8s().verifier.verify(`Bearer ${token}`)).toEqual({
      worker: "k8s:ci/ci-worker-28391-abcde",
    });
    const job = fake.get("pods", "ci-worker-28391-abcde")!["metadata"].ownerReferences[0].name;
    expect(fake.requests.slice(start)).toEqual([
      { method: "POST", path: "/apis/authentication.k8s.io/v1/tokenreviews" },
      { method: "GET", path: "/api/v1/namespaces/ci/pods/ci-worker-28391-abcde" },
      { method: "GET", path: `/apis/batch/v1/namespaces/ci/jobs/${job}` },
      { method: "GET", path: "/apis/batch/v1/namespaces/ci/cronjobs/ci-worker" },
    ]);
    // Nothing is cached: the same token is checked against the API server again.
    await k8s().verifier.verify(`bearer ${token}`);
    expect(fake.requests.length).toBe(start + 8);
  });

  it("honours SVC_CI_K8S_NAMESPACE and SVC_CI_K8S_AUDIENCE", async () => {
    const token = fake.addWorkerPod({ name: "w-1", namespace: "builds", audiences: ["docs-ci"] });
    const env = { SVC_CI_K8S_API_URL: fake.url, SVC_CI_K8S_TOKEN: fake.schedulerToken };
    const v = verifierFor({ ...env, SVC_CI_K8S_NAMESPACE: "builds", SVC_CI_K8S_AUDIENCE: "docs-ci" });
    expect(await v.verifier.verify(`Bearer ${token}`)).toEqual({ worker: "k8s:builds/w-1" });
    await expectRefused(`Bearer ${token}`, /did not authenticate/);
  });

  it("refuses a token of another service account, without reading any pod", async () => {
    const token = fake.addWorkerPod({ serviceAccount: "default" });
    const start = fake.requests.length;
    const line = await expectRefused(`Bearer ${token}`, /another identity/);
    expect(line["username"]).toBe("system:serviceaccount:ci:default");
    expect(fake.requests.length).toBe(start + 1);
  });

  it("refuses a ci-worker pod in another namespace", async () => {
    const token = fake.addWorkerPod({ namespace: "sandbox" });
    const line = await expectRefused(`Bearer ${token}`, /another identity/);
    expect(line["username"]).toBe("system:serviceaccount:sandbox:ci-worker");
  });

  it("refuses a pod whose spec runs as another service account than its token says", async () => {
    const token = fake.addWorkerPod({ name: "odd-sa" });
    fake.get("pods", "odd-sa")!["spec"].serviceAccountName = "default";
    await expectRefused(`Bearer ${token}`, /does not run as the worker service account/);
  });

  it("refuses a pod 4 hours old or older, by the injected clock", async () => {
    const created = new Date("2030-01-01T00:00:00Z");
    const token = fake.addWorkerPod({ name: "aging", createdAt: created });
    const clock = new ManualClock(new Date(created.getTime() + MAX_POD_AGE_MS - 1000));
    const env = { SVC_CI_K8S_API_URL: fake.url, SVC_CI_K8S_TOKEN: fake.schedulerToken };
    const v = verifierFor(env, { clock });
    expect(await v.verifier.verify(`Bearer ${token}`)).toEqual({ worker: "k8s:ci/aging" });
    clock.advanceSeconds(1);
    await expectRefused(`Bearer ${token}`, /4 hours old/, v);
    const old = fake.addWorkerPod({ createdAt: new Date(Date.now() - MAX_POD_AGE_MS - 60_000) });
    await expectRefused(`Bearer ${old}`, /4 hours old/);
  });

  it("refuses a pod of a Job of another CronJob, of a bare Job, and with no owner", async () => {
    const notOurs = /Job is not controlled by the CronJob ci-worker/;
    const other = await expectRefused(
      `Bearer ${fake.addWorkerPod({ ownerChain: "other-cronjob" })}`,
      notOurs,
    );
    expect(other["controller"]).toBe("batch/v1 CronJob other-worker");
    const bare = await expectRefused(`Bearer ${fake.addWorkerPod({ ownerChain: "job-only" })}`, notOurs);
    expect(bare["controller"]).toBe("none");
    const line = await expectRefused(
      `Bearer ${fake.addWorkerPod({ ownerChain: "none" })}`,
      /not controlled by a Job/,
    );
    expect(line["controller"]).toBe("none");
  });

  it("checks the kind and API group of each owner, not only its name and uid", async () => {
    const token = fake.addWorkerPod({ name: "rs-owned" });
    const podRef = fake.get("pods", "rs-owned")!["metadata"].ownerReferences[0];
    podRef.kind = "ReplicaSet";
    const line = await expectRefused(`Bearer ${token}`, /not controlled by a Job/);
    expect(line["controller"]).toBe(`batch/v1 ReplicaSet ${podRef.name}`);
    podRef.kind = "Job";
    podRef.apiVersion = "example.com/v1";
    await expectRefused(`Bearer ${token}`, /not controlled by a Job/);

    const again = fake.addWorkerPod({ name: "odd-job" });
    const job = fake.get("jobs", fake.get("pods", "odd-job")!["metadata"].ownerReferences[0].name)!;
    job["metadata"].ownerReferences[0].kind = "ScheduledJob";
    await expectRefused(`Bearer ${again}`, /Job is not controlled by the CronJob ci-worker/);
  });

  it("refuses the token of a pod recreated under the same name (the API server rejects it)", async () => {
    const token = fake.addWorkerPod({ name: "reborn" });
    fake.recreate("pods", "reborn");
    const line = await expectRefused(`Bearer ${token}`, /did not authenticate/);
    expect(String(line["error"])).toMatch(/UID/);
  });

  it("refuses when the pod is replaced between the TokenReview and the pod read (uid mismatch)", async () => {
    const token = fake.addWorkerPod({ name: "raced" });
    fake.afterNextTokenReview(() => fake.recreate("pods", "raced"));
    await expectRefused(`Bearer ${token}`, /pod was replaced/);
  });

  it("refuses when the pod's Job or the CronJob was replaced under the same name", async () => {
    const token = fake.addWorkerPod({ name: "orphan" });
    fake.recreate("jobs", fake.get("pods", "orphan")!["metadata"].ownerReferences[0].name);
    await expectRefused(`Bearer ${token}`, /Job was replaced/);

    const again = fake.addWorkerPod({ name: "old-cron" });
    fake.recreate("cronjobs", "ci-worker");
    await expectRefused(`Bearer ${again}`, /CronJob ci-worker was replaced/);
  });

  it("refuses when the pod is deleted between the TokenReview and the pod read (404 Status)", async () => {
    const token = fake.addWorkerPod({ name: "vanishing" });
    fake.afterNextTokenReview(() => fake.delete("pods", "vanishing"));
    await expectRefused(
      `Bearer ${token}`,
      /reading the pod: the API server answered 404 pods "vanishing" not found/,
    );
  });

  it("refuses a token minted for another audience, an unknown token and an unbound legacy token", async () => {
    const other = fake.addWorkerPod({ audiences: ["https://kubernetes.default.svc"] });
    const line = await expectRefused(`Bearer ${other}`, /did not authenticate/);
    expect(String(line["error"])).toMatch(/audiences/);
    await expectRefused("Bearer eyJ.not-a-token-anyone-issued", /did not authenticate/);
    await expectRefused(`Bearer ${fake.addLegacyToken()}`, /not bound to a pod/);
  });

  it("refuses a token for another audience even from an API server that ignores spec.audiences", async () => {
    const other = fake.addWorkerPod({ audiences: ["https://kubernetes.default.svc"] });
    fake.ignoreAudiences = true;
    try {
      const line = await expectRefused(`Bearer ${other}`, /did not confirm our audience/);
      expect(line["audiences"]).toEqual(["https://kubernetes.default.svc"]);
    } finally {
      fake.ignoreAudiences = false;
    }
  });

  it("refuses a missing header, another scheme and an empty token, without asking the API server", async () => {
    const start = fake.requests.length;
    await expectRefused(undefined, /no Authorization header/);
    await expectRefused("", /no Authorization header/);
    await expectRefused(`Basic ${Buffer.from("ci-worker:x").toString("base64")}`, /not a Bearer/);
    await expectRefused("Bearer ", /not a Bearer/);
    await expectRefused("Bearer two tokens", /not a Bearer/);
    expect(fake.requests.length).toBe(start);
  });

  it("refuses when the API server rejects the scheduler's own credential", async () => {
    const token = fake.addWorkerPod();
    const v = verifierFor({ SVC_CI_K8S_API_URL: fake.url, SVC_CI_K8S_TOKEN: "not-the-scheduler-token" });
    await expectRefused(`Bearer ${token}`, /TokenReview: the API server answered 401/, v);
  });
});

describe("Kubernetes API server unavailable", () => {
  async function expectUnavailable(v: ReturnType<typeof verifierFor>, token: string) {
    const err = await rejection(v.verifier.verify(`Bearer ${token}`));
    expect(err.code).toBe("UNAVAILABLE");
    expect(err.status).toBe(503);
    expect(v.lines.at(-1)).toMatchObject({
      severity: "ERROR",
      message: "worker identity could not be checked",
    });
  }

  it("answers 503 when nothing listens at the API server's address", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    await expectUnavailable(verifierFor({ SVC_CI_K8S_API_URL: url, SVC_CI_K8S_TOKEN: "x" }), "eyJ.a");
  });

  it("answers 503 when the API server answers 5xx or 429, at any step", async () => {
    const token = fake.addWorkerPod();
    fake.outage = 503;
    await expectUnavailable(k8s(), token);
    fake.outage = 429;
    await expectUnavailable(k8s(), token);
    fake.outage = undefined;
    fake.afterNextTokenReview(() => {
      fake.outage = 500;
    });
    await expectUnavailable(k8s(), token);
  });

  it("answers 503 when the API server does not answer in time", async () => {
    fake.stall = true;
    const env = { SVC_CI_K8S_API_URL: fake.url, SVC_CI_K8S_TOKEN: fake.schedulerToken };
    await expectUnavailable(verifierFor(env, { timeoutMs: 200 }), fake.addWorkerPod());
  });

  it("refuses to start with plain http to a non-loopback API server", () => {
    const { log } = recordingLog();
    const config = loadConfig({ SVC_CI_K8S_API_URL: "http://10.0.0.1", SVC_CI_K8S_TOKEN: "x" });
    expect(() => workerVerifierFromConfig(config, log)).toThrow(/must be https/);
    const missingCa = loadConfig({ SVC_CI_K8S_API_URL: fake.url, SVC_CI_K8S_CA_FILE: "/nonexistent/ca.pem" });
    expect(() => workerVerifierFromConfig(missingCa, log)).toThrow(/ENOENT/);
  });
});

describe("scheduler credential from Google Application Default Credentials", () => {
  it("calls the API server with the metadata server's access token when SVC_CI_K8S_TOKEN is unset", async () => {
    const seen: string[] = [];
    const metadata = http.createServer((req, res) => {
      seen.push(req.url ?? "");
      if (req.headers["metadata-flavor"] !== "Google") return void res.writeHead(403).end();
      res.writeHead(200, { "content-type": "application/json", "metadata-flavor": "Google" });
      res.end(JSON.stringify({ access_token: fake.schedulerToken, expires_in: 3599, token_type: "Bearer" }));
    });
    await new Promise<void>((resolve) => metadata.listen(0, "127.0.0.1", resolve));
    const saved = {
      host: process.env["GCE_METADATA_HOST"],
      detect: process.env["METADATA_SERVER_DETECTION"],
    };
    process.env["GCE_METADATA_HOST"] = `127.0.0.1:${(metadata.address() as AddressInfo).port}`;
    process.env["METADATA_SERVER_DETECTION"] = "assume-present";
    try {
      const v = verifierFor({ SVC_CI_K8S_API_URL: fake.url });
      const token = fake.addWorkerPod({ name: "via-adc" });
      expect(await v.verifier.verify(`Bearer ${token}`)).toEqual({ worker: "k8s:ci/via-adc" });
      expect(seen.some((u) => u.includes("/service-accounts/default/token"))).toBe(true);
    } finally {
      for (const [k, v] of [
        ["GCE_METADATA_HOST", saved.host],
        ["METADATA_SERVER_DETECTION", saved.detect],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      await new Promise<void>((resolve) => metadata.close(() => resolve()));
    }
  });
});

describe("static worker token (local)", () => {
  const local = () => verifierFor({ SVC_CI_WORKER_TOKEN: STATIC_TOKEN });

  it("accepts the configured token", async () => {
    expect(await local().verifier.verify(`Bearer ${STATIC_TOKEN}`)).toEqual({ worker: "static-token" });
  });

  it("refuses another token, a prefix of it, and a missing header", async () => {
    await expectRefused("Bearer local-worker-token-0123456780", /not SVC_CI_WORKER_TOKEN/, local());
    await expectRefused(`Bearer ${STATIC_TOKEN.slice(0, -1)}`, /not SVC_CI_WORKER_TOKEN/, local());
    await expectRefused(undefined, /no Authorization header/, local());
  });

  it("cannot be configured together with a Kubernetes API server", () => {
    expect(() => loadConfig({ SVC_CI_WORKER_TOKEN: STATIC_TOKEN, SVC_CI_K8S_API_URL: fake.url })).toThrow(
      /SVC_CI_WORKER_TOKEN/,
    );
  });
});

describe("no worker identity configured", () => {
  it("refuses every claim, saying neither setting is configured", async () => {
    const v = verifierFor({});
    expect(v.lines.at(-1)?.["message"]).toMatch(/every claim will be refused/);
    const err = await rejection(v.verifier.verify(`Bearer ${STATIC_TOKEN}`));
    expect(err.code).toBe("UNAUTHENTICATED");
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/neither SVC_CI_K8S_API_URL nor SVC_CI_WORKER_TOKEN/);
  });
});
