import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { MAX_POD_AGE_MS, WORKER_NAME } from "../../../shared/ci/worker/verifier.ts";
import { loadConfig } from "../../../shared/config.ts";
import { bundleWorker } from "../../../worker/bundle.ts";
import { DEFAULT_TOKEN_FILE, loadWorkerConfig } from "../../../worker/config.ts";
import { freePort } from "../../support/ports.ts";
import { expr, loadTerraform, resource } from "./terraform.ts";

/**
 * The worker's Kubernetes manifests agree with what the scheduler's claim verification requires
 * (shared/ci/worker/kubernetes.ts with the defaults of shared/config.ts) and with what the worker
 * reads (worker/config.ts): if either side changes, this fails instead of every claim in the cluster.
 */

/** Manifests are free-form YAML, checked field by field below. */
type Obj = any;

const dir = new URL("../../../worker/deploy/", import.meta.url).pathname;
const objects: Obj[] = readdirSync(dir)
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((f) =>
    parseAllDocuments(readFileSync(path.join(dir, f), "utf8")).map((doc) => {
      expect(doc.errors, f).toEqual([]);
      return doc.toJS();
    }),
  );
const only = (kind: string): Obj => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, `one ${kind}`).toHaveLength(1);
  return found[0];
};

const scheduler = loadConfig({});
const namespace = scheduler.SVC_CI_K8S_NAMESPACE;
const audience = scheduler.SVC_CI_K8S_AUDIENCE;
const cron = only("CronJob");
const podSpec = cron.spec.jobTemplate.spec.template.spec;
const container = podSpec.containers[0];
const env = Object.fromEntries((container.env ?? []).map((e: Obj) => [e.name, e.value]));

/** Whether IPv4 `ip` is inside `cidr`. */
function inCidr(ip: string, cidr: string): boolean {
  const [base = "", bits = "32"] = cidr.split("/");
  if (base.includes(":") !== ip.includes(":")) return false;
  const toInt = (a: string) => a.split(".").reduce((n, part) => n * 256 + Number(part), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
}

describe("worker/deploy: the manifests and the claim verification agree", () => {
  it("everything is in the scheduler's CI namespace, which the Namespace creates", () => {
    expect(only("Namespace").metadata.name).toBe(namespace);
    for (const o of objects.filter((x) => x.kind !== "Namespace"))
      expect(o.metadata.namespace, o.kind).toBe(namespace);
  });

  it("pods run as the ci-worker service account and come from the CronJob ci-worker (pod -> Job -> CronJob)", () => {
    expect(only("ServiceAccount").metadata.name).toBe(WORKER_NAME);
    // The Job controller makes the pods and the CronJob controller the Jobs, each as controller
    // owner: exactly the chain the verifier walks. batch/v1, as isBatchV1 requires.
    expect(cron.apiVersion).toBe("batch/v1");
    expect(cron.metadata.name).toBe(WORKER_NAME);
    expect(podSpec.serviceAccountName).toBe(WORKER_NAME);
    // No bare Job or pod (their claims would be refused).
    expect(objects.filter((o) => o.kind === "Job" || o.kind === "Pod")).toEqual([]);
    // One job per pod, and a pod never lives long enough to be refused as too old.
    expect(container.args).toEqual(["--once"]);
    expect(cron.spec.jobTemplate.spec.activeDeadlineSeconds * 1000).toBeLessThan(MAX_POD_AGE_MS);
  });

  it("pods project a token for the scheduler's audience at the path the worker reads", () => {
    const volume = podSpec.volumes.find((v: Obj) => v.projected);
    const source = volume.projected.sources.find((s: Obj) => s.serviceAccountToken).serviceAccountToken;
    expect(source.audience).toBe(audience);
    const mount = container.volumeMounts.find((m: Obj) => m.name === volume.name);
    const file = path.posix.join(mount.mountPath, source.path);
    expect(file).toBe(DEFAULT_TOKEN_FILE);
    // The worker, configured as the pod is, reads that file (and no static token stands in for it).
    expect(env["SVC_CI_WORKER_TOKEN"]).toBeUndefined();
    const worker = loadWorkerConfig(env);
    expect(worker.credential).toEqual({ kind: "file", path: file });
    expect(worker.schedulerUrl).toMatch(/^https:/);
  });

  it("grants no Kubernetes API access: no RBAC objects, no API token mounted", () => {
    const rbac = objects.filter((o) => /^(Cluster)?Role(Binding)?$/.test(o.kind));
    expect(rbac).toEqual([]);
    expect(only("ServiceAccount").automountServiceAccountToken).toBe(false);
    expect(podSpec.automountServiceAccountToken).toBe(false);
  });

  it("the NetworkPolicy covers the worker pods, takes no ingress, and keeps them off the metadata server and private addresses", () => {
    const policy = only("NetworkPolicy");
    const labels = cron.spec.jobTemplate.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(policy.spec.podSelector.matchLabels)) expect(labels[k]).toBe(v);
    expect(policy.spec.policyTypes.sort()).toEqual(["Egress", "Ingress"]);
    expect(policy.spec.ingress ?? []).toEqual([]);
    const blocks = policy.spec.egress.flatMap((rule: Obj) =>
      (rule.to ?? []).filter((t: Obj) => t.ipBlock).map((t: Obj) => t.ipBlock),
    );
    const reachable = (ip: string) =>
      blocks.some((b: Obj) => inCidr(ip, b.cidr) && !(b.except ?? []).some((e: string) => inCidr(ip, e)));
    for (const ip of [
      "169.254.169.254",
      "169.254.169.252",
      "10.0.0.1",
      "10.96.0.10",
      "172.16.5.4",
      "192.168.1.1",
      "100.64.0.1",
    ])
      expect(reachable(ip), ip).toBe(false);
    for (const ip of ["8.8.8.8", "140.82.112.3"]) expect(reachable(ip), ip).toBe(true);
    // DNS only to kube-dns, on port 53.
    const dns = policy.spec.egress.find((rule: Obj) => (rule.to ?? []).some((t: Obj) => t.podSelector));
    expect(dns.ports.map((p: Obj) => p.port)).toEqual([53, 53]);
  });
});

describe("worker/Dockerfile: the image's program", () => {
  it("bundles into one file that runs with no node_modules, reading its configuration", async () => {
    const dockerfile = readFileSync(new URL("../../../worker/Dockerfile", import.meta.url), "utf8");
    expect(dockerfile).toContain("RUN node worker/bundle.ts /out/worker.mjs");
    expect(dockerfile).toMatch(/apt-get install .*bubblewrap/);
    expect(dockerfile).toContain('ENTRYPOINT ["node", "--enable-source-maps", "/app/worker.mjs"]');
    const dir = await mkdtemp(path.join(tmpdir(), "quire-worker-bundle-"));
    try {
      await bundleWorker(path.join(dir, "worker.mjs"));
      // Run from a folder with no node_modules: a configuration error names the variable, exit 2.
      const bad = spawnSync(process.execPath, ["worker.mjs", "--once"], {
        cwd: dir,
        env: { PATH: process.env["PATH"] ?? "", SVC_CI_CHECK_NETWORK: "host" },
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(bad.stderr).toContain("SVC_CI_CHECK_NETWORK: must be none or on");
      expect(bad.status).toBe(2);
      // A claim that cannot reach the scheduler, with --once: logged as JSON, exit 1.
      const closedPort = await freePort();
      const unreachable = spawnSync(process.execPath, ["worker.mjs", "--once"], {
        cwd: dir,
        env: {
          PATH: process.env["PATH"] ?? "",
          SVC_CI_SCHEDULER_URL: `http://127.0.0.1:${closedPort}`,
          SVC_CI_WORKER_TOKEN: "local-worker-token-1234",
        },
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(unreachable.stdout).toContain('"message":"claim failed"');
      expect(unreachable.stdout).toContain("ECONNREFUSED");
      expect(unreachable.status).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("worker/deploy/scheduler: the scheduler's RBAC and terraform agree", () => {
  const rbacDir = new URL("../../../worker/deploy/scheduler/", import.meta.url).pathname;
  const rbac: Obj[] = parseAllDocuments(readFileSync(path.join(rbacDir, "rbac.yaml"), "utf8")).map((d) =>
    d.toJS(),
  );
  const kind = (k: string): Obj => {
    const found = rbac.filter((o) => o.kind === k);
    expect(found, `one ${k}`).toHaveLength(1);
    return found[0];
  };

  it("names the functions' service account as the user, and terraform's namespace and audience defaults", async () => {
    const tf = await loadTerraform();
    const account = resource(tf, "google_service_account", "functions")["account_id"];
    const user = `${account}@PROJECT.iam.gserviceaccount.com`;
    for (const binding of [kind("ClusterRoleBinding"), kind("RoleBinding")])
      expect(binding.subjects).toEqual([{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }]);
    expect(tf.variables["ci_k8s_namespace"]?.["default"]).toBe(namespace);
    expect(tf.variables["ci_k8s_audience"]?.["default"]).toBe(audience);
    expect(tf.outputs["ci_worker"]?.["value"].scheduler_identity).toBe(
      expr("google_service_account.functions.email"),
    );
    expect(kind("Role").metadata.namespace).toBe(namespace);
    expect(kind("RoleBinding").metadata.namespace).toBe(namespace);
  });

  it("grants TokenReview and reading exactly the objects the claim check reads", () => {
    expect(kind("ClusterRoleBinding").roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: "system:auth-delegator",
    });
    expect(kind("RoleBinding").roleRef.name).toBe(kind("Role").metadata.name);
    expect(kind("Role").rules).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["get"] },
      { apiGroups: ["batch"], resources: ["jobs", "cronjobs"], verbs: ["get"] },
    ]);
  });

  it("the CronJob's scheduler URL is the public URL terraform outputs for it", async () => {
    const tf = await loadTerraform();
    expect(tf.outputs["ci_worker"]?.["value"].scheduler_url).toBe(expr("local.public_url"));
    expect(env["SVC_CI_SCHEDULER_URL"]).toBe("https://quire.example.com");
  });
});
