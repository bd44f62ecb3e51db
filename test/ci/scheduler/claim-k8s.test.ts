import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../shared/config.ts";
import { api } from "../../support/api.ts";
import { client } from "../../support/client.ts";
import { startFakeKubernetes } from "../../support/k8s-fake.ts";
import { commit, errorOf, expectStatus, repoWithOwner, useFixture } from "../../support/world.ts";
import { type CiApp, ciYaml, startCiApp } from "../support.ts";

let app: CiApp;
const k8s = useFixture(startFakeKubernetes);
beforeAll(async () => {
  app = await startCiApp({
    SVC_CI_WORKER_TOKEN: "",
    SVC_CI_K8S_API_URL: k8s.url,
    SVC_CI_K8S_TOKEN: k8s.schedulerToken,
  });
});
afterAll(async () => {
  await app?.close();
});

const claimAs = (token: string) => api(client(app.url, async () => token)).post("/claim");

/** Queues one manual job, so that an accepted claim has something to take. */
async function queueJob(): Promise<string> {
  const fx = await repoWithOwner(app);
  await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["t/unit"], "on:\n  push:\n    branches: [none]\n") });
  const run = await api(fx.client).post("/repos/:repo*/-/ci/run", {
    params: { repo: fx.repo },
    body: { branch: "main" },
  });
  return expectStatus(run, 201).run_id;
}

describe("POST /claim with Kubernetes worker identity", () => {
  it("gives the job to a pod of the ci-worker CronJob, recorded as claimed by that pod", async () => {
    const id = await queueJob();
    const token = k8s.addWorkerPod({ name: "ci-worker-29000000-abcde" });
    const res = await claimAs(token);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id, claimed_by: "k8s:ci/ci-worker-29000000-abcde" });
  });

  it("refuses, with 401 and without touching the queue, every token the spec rules out", async () => {
    const id = await queueJob();
    const refused: [string, string][] = [
      ["another service account", k8s.addWorkerPod({ serviceAccount: "default" })],
      ["another namespace", k8s.addWorkerPod({ namespace: "apps" })],
      [
        "a pod older than 4 hours",
        k8s.addWorkerPod({ createdAt: new Date(Date.now() - 4 * 3600_000 - 60_000) }),
      ],
      ["a pod of a bare Job", k8s.addWorkerPod({ ownerChain: "job-only" })],
      ["a pod of another CronJob", k8s.addWorkerPod({ ownerChain: "other-cronjob" })],
      ["a pod with no owner", k8s.addWorkerPod({ ownerChain: "none" })],
      ["a token for another audience", k8s.addWorkerPod({ audiences: ["https://kubernetes.default.svc"] })],
      ["a token the cluster never issued", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"],
    ];
    for (const [what, token] of refused) {
      const res = await claimAs(token);
      expect(res.status, what).toBe(401);
      expect(errorOf(res).code, what).toBe("UNAUTHENTICATED");
    }
    const [job] = await app.sql("SELECT status, attempt FROM ci_jobs WHERE id = $1", [id]);
    expect(job).toEqual({ status: "queued", attempt: 0 });
    expect(expectStatus(await claimAs(k8s.addWorkerPod()), 200)?.id).toBe(id);
  });

  it("answers 503 when the cluster's API server is down, so workers retry instead of giving up", async () => {
    const token = k8s.addWorkerPod();
    k8s.outage = 503;
    try {
      const res = await claimAs(token);
      expect(res.status).toBe(503);
      expect(errorOf(res).code).toBe("UNAVAILABLE");
    } finally {
      k8s.outage = undefined;
    }
  });

  it("refuses a static worker token once a Kubernetes configuration is set", () => {
    expect(() =>
      loadConfig({ SVC_CI_K8S_API_URL: k8s.url, SVC_CI_WORKER_TOKEN: "local-worker-token-0123456789" }),
    ).toThrow(/SVC_CI_WORKER_TOKEN/);
  });
});
