import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { type BuiltFunction, buildFunctions } from "../../scripts/build.ts";
import {
  type BundleProcess,
  linkDependencies,
  listening,
  startBundle,
} from "../../scripts/bundle-process.ts";
import { loadTerraform, resource } from "../fast/deploy/terraform.ts";
import type { UrlMap } from "../fast/deploy/urlmap.ts";
import { appAccess, type TestApp } from "../support/app.ts";
import { startTestIdp, type TestIdp } from "../support/idp.ts";
import { type FakeKubernetes, startFakeKubernetes } from "../support/k8s-fake.ts";
import { freePort } from "../support/ports.ts";
import { startTasksEmulator, type TasksEmulator } from "../webhooks/cloud-tasks.ts";
import { startLoadBalancer, startMetadataServer } from "./fronts.ts";
import { type FunctionSettings, localEnv, terraformSettings } from "./terraform-env.ts";

/**
 * Quire as terraform/ deploys it, on this machine: the built function folders on plain Node, each
 * with the environment terraform gives it (evaluated by `terraform console`, test/deploy/
 * terraform-env.ts), behind a load balancer that routes by terraform's own URL map (lb.tf, modelled
 * by test/fast/deploy/urlmap.ts), with the Cloud Tasks emulator calling the delivery function, a
 * Kubernetes API fake for TokenReview and a metadata server that hands the scheduler its access
 * token. No function runs a webhook pump or a timer; nothing calls /webhook-sweep.
 *
 * The stand-ins, each for a managed service this machine does not have (the rest is terraform's):
 * Cloud SQL → DATABASE_URL of a test database; Cloud Storage → local directories; KMS → the local
 * job signer; Pub/Sub is configured but never used by a function; the platform's invoker IAM on the
 * internal functions → none (SVC_INTERNAL_INVOKERS and the tasks' OIDC account are left out);
 * Secret Manager → the values given here; the scheduler's mounted CA file → a temporary file.
 */

/** Terraform variables every topology sets (the ones without a default, and the domain's stand-in). */
const BASE_VARS = {
  project_id: "quire-test",
  domain: "quire.test",
  container_image: "unused",
  bootstrap_admin: "admin@quire.test",
};

/** Secret Manager's values for the secrets terraform mounts, by variable name. */
const SECRET_VALUES: Record<string, string> = {
  SVC_CI_WEBHOOK_SECRET: "topology-webhook-secret-0123456789",
  // 32 bytes, base64.
  SVC_ARCHIVE_SIGNING_KEY: Buffer.alloc(32, 7).toString("base64"),
  OIDC_CLIENT_SECRET: "topology-oidc-client-secret",
  SVC_CI_WORKER_TOKEN: "topology-static-worker-token-0123",
};

export const TOPOLOGY_CLIENT_ID = "quire-topology";
export const TOPOLOGY_STATIC_WORKER_TOKEN = SECRET_VALUES["SVC_CI_WORKER_TOKEN"] as string;

export interface Topology {
  /** The load balancer: `https://<domain>` of the deployment. */
  url: string;
  idp: TestIdp;
  k8s: FakeKubernetes;
  tasks: TasksEmulator;
  /** Clients through the load balancer and SQL on the database, as the test helpers take them. */
  app: TestApp;
  settings: FunctionSettings;
  /** The environment each started function got. */
  envOf(target: string): Record<string, string>;
  bundles: Map<string, BundleProcess>;
  close(): Promise<void>;
}

export interface TopologyOptions {
  databaseUrl: string;
  /** Terraform variables beyond the base ones (the Kubernetes API URL is the fake's unless given). */
  vars?: Record<string, string | boolean>;
  /** Which functions to start; the others are not deployed (the load balancer answers 502). */
  targets: string[];
  /** A folder `buildFunctions` wrote, to share one build between topologies. */
  built?: { dir: string; functions: BuiltFunction[] };
}

export async function startTopology(opts: TopologyOptions): Promise<Topology> {
  const work = await mkdtemp(path.join(tmpdir(), "quire-topology-"));
  const closers: (() => Promise<unknown>)[] = [() => rm(work, { recursive: true, force: true })];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };
  try {
    const [idp, k8s, tasks] = await Promise.all([
      startTestIdp({ audience: TOPOLOGY_CLIENT_ID }),
      startFakeKubernetes(),
      startTasksEmulator(),
    ]);
    closers.push(
      () => idp.close(),
      () => k8s.close(),
      () => tasks.close(),
    );
    const metadata = await startMetadataServer(k8s.schedulerToken);
    closers.push(() => metadata.close());

    const vars: Record<string, string | boolean> = {
      ...BASE_VARS,
      oidc_issuer: idp.issuer,
      oidc_client_id: TOPOLOGY_CLIENT_ID,
      ...opts.vars,
    };
    if (vars["ci_k8s_api_url"] === "fake") vars["ci_k8s_api_url"] = k8s.url;
    const settings = await terraformSettings(vars);

    const built = opts.built ?? (await buildOnce(work));
    const backends = new Map<string, string>();
    const lb = await startLoadBalancer(await loadUrlMap(), () => backends, [], String(vars["domain"]));
    closers.push(() => lb.close());
    const ports = new Map<string, number>();
    for (const target of opts.targets) ports.set(target, await freePort());

    const caDir = path.join(work, "secret-files");
    const envs = new Map<string, Record<string, string>>();
    for (const target of opts.targets) {
      const env = await cloudEnv(target, settings, {
        databaseUrl: opts.databaseUrl,
        publicUrl: `https://${vars["domain"]}`,
        lbUrl: lb.url,
        ports,
        tasks,
        work,
        caDir,
        caPem: typeof vars["ci_k8s_ca_pem"] === "string" ? vars["ci_k8s_ca_pem"] : "",
        metadataHost: metadata.host,
      });
      envs.set(target, env);
    }
    const bundles = new Map<string, BundleProcess>();
    closers.push(async () => {
      for (const b of bundles.values()) await b.stop();
    });
    for (const target of opts.targets) {
      const fn = built.functions.find((f) => f.target === target);
      if (!fn) throw new Error(`no built folder for ${target}`);
      bundles.set(target, await startBundle(fn.dir, target, envs.get(target) ?? {}, ports.get(target)));
    }
    await Promise.all([...bundles.values()].map((b) => listening(b)));
    for (const [target, bundle] of bundles) backends.set(target, bundle.url);

    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 2 });
    pool.on("error", () => {});
    closers.push(() => pool.end());
    const app = {
      url: lb.url,
      idp,
      databaseUrl: opts.databaseUrl,
      ...appAccess(lb.url, idp, pool),
      close,
    } as unknown as TestApp;
    return {
      url: lb.url,
      idp,
      k8s,
      tasks,
      app,
      settings,
      envOf: (t) => envs.get(t) ?? {},
      bundles,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Builds the function folders into `work` and links their declared packages beside them. */
export async function buildOnce(work: string): Promise<{ dir: string; functions: BuiltFunction[] }> {
  const dir = path.join(work, "functions");
  const functions = await buildFunctions(dir);
  await linkDependencies(
    work,
    functions.flatMap((b) => Object.keys(b.dependencies)),
  );
  return { dir, functions };
}

interface EnvContext {
  databaseUrl: string;
  publicUrl: string;
  lbUrl: string;
  ports: Map<string, number>;
  tasks: TasksEmulator;
  work: string;
  caDir: string;
  caPem: string;
  metadataHost: string;
}

/** Terraform's environment of `target` with the stand-ins of this machine (see the module's comment). */
async function cloudEnv(target: string, s: FunctionSettings, c: EnvContext): Promise<Record<string, string>> {
  const env = await localEnv(
    s,
    { env: s.env[target] ?? {}, secrets: s.secrets[target] ?? {}, files: s.files[target] ?? {} },
    {
      publicUrl: c.publicUrl,
      lbUrl: c.lbUrl,
      functionUrls: Object.fromEntries(
        [...c.ports].map(([name, port]) => [name, `http://127.0.0.1:${port}`]),
      ),
      // What is replaced below needs no value of its own.
      references: {
        "google_sql_database_instance.quire.connection_name": "",
        "google_sql_user.functions.name": "",
        "google_sql_database.quire.name": "",
        "google_service_account.invoker.email": "",
        "google_storage_bucket.blobs.name": "",
        "google_storage_bucket.ci_logs.name": "",
        "google_pubsub_topic.events.name": "quire-events",
        "google_cloud_tasks_queue.webhooks.id": c.tasks.queue,
        "google_kms_crypto_key.jobs.id": "",
        "google_kms_crypto_key.secrets.id": "",
        "google_kms_crypto_key.log.id": "",
      },
      secrets: SECRET_VALUES,
      // The mounted secret version: the CA terraform stored (ci_k8s_ca_pem).
      fileDir: c.caDir,
      files: { "google_secret_manager_secret.ci_k8s_ca.secret_id": c.caPem },
    },
  );
  // Cloud SQL → a test database.
  for (const k of ["SVC_CLOUD_SQL_INSTANCE", "SVC_CLOUD_SQL_IP_TYPE", "SVC_DB_IAM_USER", "SVC_DB_NAME"])
    delete env[k];
  env["DATABASE_URL"] = c.databaseUrl;
  // Cloud Storage → local directories; KMS → the local signers.
  env["SVC_BLOB_STORE"] = "local";
  env["SVC_BLOB_LOCAL_DIR"] = path.join(c.work, "blobs");
  env["SVC_CI_LOG_STORE"] = "local";
  env["SVC_CI_LOG_DIR"] = path.join(c.work, "ci-logs");
  env["SVC_DATA_DIR"] = path.join(c.work, "data");
  delete env["SVC_BLOB_BUCKET"];
  delete env["SVC_CI_LOG_BUCKET"];
  env["SVC_JOB_SIGNER"] = "local";
  delete env["SVC_JOB_KMS_KEY_VERSION"];
  delete env["SVC_SECRETS_KMS_KEY"];
  delete env["SVC_LOG_KMS_KEY_VERSION"];
  // The platform's IAM check on internal functions has no stand-in.
  delete env["SVC_INTERNAL_INVOKERS"];
  delete env["SVC_WEBHOOK_TASKS_SERVICE_ACCOUNT"];
  // Pub/Sub: named, never used by a function (the SSE service relays the log). Cloud Tasks → the
  // emulator's queue.
  env["CLOUD_TASKS_EMULATOR_HOST"] = c.tasks.host;
  // The metadata server every Cloud Run instance has (the scheduler's Google credential).
  env["GCE_METADATA_HOST"] = c.metadataHost;
  env["METADATA_SERVER_DETECTION"] = "assume-present";
  env["LOG_LEVEL"] = process.env["QUIRE_TEST_LOGS"] === "1" ? "info" : "error";
  return env;
}

async function loadUrlMap(): Promise<UrlMap> {
  return resource(await loadTerraform(), "google_compute_url_map", "api") as UrlMap;
}
