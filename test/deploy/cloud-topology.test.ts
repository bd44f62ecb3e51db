import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ciYaml } from "../ci/support.ts";
import { freshDatabase } from "../support/app.ts";
import { commit, createBranch, repoWithOwner } from "../support/world.ts";
import { startTopology, TOPOLOGY_STATIC_WORKER_TOKEN, type Topology } from "./topology.ts";

/**
 * The deployment as terraform/ wires it (test/deploy/topology.ts): built functions with terraform's
 * environment behind the URL map, Cloud Tasks delivering webhooks, and no sweep, cron or pump
 * anywhere. A commit's event must reach the CI scheduler through the load balancer and queue a job
 * that a worker pod's projected token claims; `quire login` must find its client at /auth/cli.
 */

const CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBdummyCAforthetopologytest\n-----END CERTIFICATE-----\n";

let top: Topology;
beforeAll(async () => {
  top = await startTopology({
    databaseUrl: await freshDatabase(),
    vars: {
      ci_k8s_api_url: "fake",
      ci_k8s_ca_pem: CA_PEM,
      cli_client_id: "quire-cli-topology",
      cli_client_secret: "desktop-secret-that-is-not-secret",
    },
    targets: ["repos", "orgs", "scheduler", "identity", "webhookDelivery"],
  });
}, 300_000);
afterAll(async () => {
  // QUIRE_TEST_LOGS=1: the functions' own logs (at info), to see why a step failed.
  if (process.env["QUIRE_TEST_LOGS"] === "1")
    for (const [target, bundle] of top?.bundles ?? []) console.log(target, bundle.output());
  await top?.close();
});

const claim = (token: string) =>
  fetch(`${top.url}/claim`, { method: "POST", headers: { authorization: `Bearer ${token}` } });

describe("the deployed topology", () => {
  it("gives only the scheduler the worker-identity settings, its CA as a mounted file", () => {
    const scheduler = top.envOf("scheduler");
    expect(scheduler["SVC_CI_K8S_API_URL"]).toBe(top.k8s.url);
    expect(scheduler["SVC_CI_K8S_NAMESPACE"]).toBe("ci");
    expect(scheduler["SVC_CI_K8S_AUDIENCE"]).toBe("quire-ci");
    expect(scheduler["SVC_CI_K8S_CA_FILE"]).toMatch(/\/etc\/quire-k8s\/ca\.pem$/);
    expect(scheduler).not.toHaveProperty("SVC_CI_WORKER_TOKEN");
    for (const other of ["repos", "identity", "webhookDelivery"])
      expect(Object.keys(top.envOf(other)).filter((k) => k.startsWith("SVC_CI_K8S_"))).toEqual([]);
    // The CI webhook goes to the public URL, which the load balancer routes to the scheduler.
    expect(top.settings.env["repos"]?.["RUNNER_URL"]).toBe("https://quire.test");
  });

  it("answers GET /auth/cli through the load balancer with terraform's CLI client", async () => {
    const res = await fetch(`${top.url}/auth/cli`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      issuer: top.idp.issuer,
      client_id: "quire-cli-topology",
      client_secret: "desktop-secret-that-is-not-secret",
      scopes: ["openid", "email"],
    });
  });

  it("a commit queues a CI job at once (no sweep runs), which a worker pod's projected token claims", async () => {
    const fx = await repoWithOwner(top.app);
    const pod = top.k8s.addWorkerPod({ name: "ci-worker-1-abcde" });
    expect((await claim(pod)).status, "nothing queued yet").toBe(204);
    const committed = Date.now();
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) }, "add CI");
    let job: Record<string, unknown> | undefined;
    while (!job) {
      const res = await claim(pod);
      if (res.status === 200) job = (await res.json()) as Record<string, unknown>;
      else expect(res.status, await res.text()).toBe(204);
      // No sweep runs here: only the commit's own task can queue it (the sweep, up to a minute).
      expect(Date.now() - committed, "the job was not queued within 20 s").toBeLessThan(20_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job).toMatchObject({
      repo: fx.repo,
      branch: "main",
      trigger_type: "push",
      status: "claimed",
      claimed_by: "k8s:ci/ci-worker-1-abcde",
    });
    expect(job["request_token"]).toEqual(expect.any(String));
    // One task for the attempt: one reservation (lease 1) and its claim (lease 2), delivered once.
    // (The event's other row is the auto-merge subscription's, for autoMerge, not started here.)
    // The delivery is recorded after the scheduler answers, and the job may be claimed before that.
    const outboxRows = () =>
      top.app.sql<{ attempts: number; lease_seq: number; delivered: boolean }>(
        `SELECT o.attempts, o.lease_seq::int AS lease_seq, o.delivered_at IS NOT NULL AS delivered
           FROM webhook_outbox o JOIN events e ON e.id = o.event_id JOIN subscriptions s ON s.id = o.subscription_id
          WHERE e.repo = $1 AND e.type = 'com.svc.commit.created' AND s.system_name = 'ci-scheduler'`,
        [fx.repo],
      );
    await vi.waitFor(async () => expect((await outboxRows())[0]?.delivered).toBe(true), { timeout: 10_000 });
    expect(await outboxRows()).toEqual([{ attempts: 1, lease_seq: 2, delivered: true }]);
    // The scheduler reached the API server with its Google access token (the metadata server's).
    expect(top.k8s.requests.some((r) => r.path.endsWith("/tokenreviews"))).toBe(true);
    // A token that is not a worker pod's is refused.
    expect((await claim(top.k8s.addWorkerPod({ ownerChain: "job-only" }))).status).toBe(401);
  });

  it("makes one task per attempt when concurrent commits' passes race the sweep", async () => {
    const fx = await repoWithOwner(top.app);
    const branches = ["b1", "b2", "b3", "b4", "b5"];
    for (const b of branches) await createBranch(fx, b);
    // The sweep's own pass, as Cloud Scheduler calls the delivery function, again and again.
    const sweepUrl = `${top.bundles.get("webhookDelivery")?.url}/webhook-sweep`;
    let sweeping = true;
    const sweeps = (async () => {
      let n = 0;
      while (sweeping) {
        const res = await fetch(sweepUrl, { method: "POST" });
        expect(res.status, await res.text()).toBe(200);
        n++;
      }
      return n;
    })();
    await Promise.all(branches.map((b) => commit(fx, b, { [`${b}.md`]: b }, `on ${b}`)));
    const sql = `SELECT o.attempts, o.lease_seq::int AS lease_seq, o.delivered_at IS NOT NULL AS delivered
                   FROM webhook_outbox o JOIN events e ON e.id = o.event_id JOIN subscriptions s ON s.id = o.subscription_id
                  WHERE e.repo = $1 AND e.type = 'com.svc.commit.created' AND s.system_name = 'ci-scheduler'`;
    const deadline = Date.now() + 10_000;
    let rows: { attempts: number; lease_seq: number; delivered: boolean }[] = [];
    do {
      rows = await top.app.sql(sql, [fx.repo]);
      if (rows.length === branches.length && rows.every((r) => r.delivered)) break;
      await new Promise((r) => setTimeout(r, 50));
    } while (Date.now() < deadline);
    sweeping = false;
    expect(await sweeps).toBeGreaterThan(0);
    expect(rows).toEqual(branches.map(() => ({ attempts: 1, lease_seq: 2, delivered: true })));
  });
});

describe("the deployed topology without a cluster (ci_static_worker_token)", () => {
  it("mounts the static worker token into the scheduler, which accepts it at /claim", async () => {
    const bare = await startTopology({
      databaseUrl: await freshDatabase(),
      vars: { ci_static_worker_token: true },
      targets: ["scheduler"],
    });
    try {
      expect(bare.settings.secrets["scheduler"]?.["SVC_CI_WORKER_TOKEN"]).toBe(
        "res:google_secret_manager_secret.ci_worker_token.secret_id",
      );
      expect(bare.settings.secrets["repos"]).not.toHaveProperty("SVC_CI_WORKER_TOKEN");
      const ask = (token: string) =>
        fetch(`${bare.url}/claim`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
      expect((await ask(TOPOLOGY_STATIC_WORKER_TOKEN)).status).toBe(204);
      expect((await ask("another-token-of-enough-length")).status).toBe(401);
    } finally {
      await bare.close();
    }
  }, 300_000);
});
