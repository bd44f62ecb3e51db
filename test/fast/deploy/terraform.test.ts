import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cloudFunctions, groups, isInternalFunction } from "../../../functions/groups.ts";
import { CONTAINER_ENTRIES, DOCKERFILE } from "../../../scripts/build.ts";
import { FUNCTION_ENV } from "../../../scripts/bundle-options.ts";
import type { BlockSchema } from "../../../scripts/terraform-schema.ts";
import { envSchema } from "../../../shared/config.ts";
import {
  MEASURED_BODY_MIB,
  REPOS_COMMIT_MIB,
  REPOS_STARTED_MIB,
  WORST_BODY_MIB,
} from "../../deploy/memory-budget.ts";
import { type Body, expr, loadTerraform, resource, TERRAFORM_DIR, type Terraform } from "./terraform.ts";

/**
 * terraform/ checked offline against the provider's names (terraform/schema/google-provider.json,
 * derived by scripts/terraform-schema.ts) and against the code it deploys. `terraform validate` and
 * `plan` need the provider from the registry, which this machine cannot reach (README, "Deploy").
 */

interface ProviderSchema {
  described_by_hand?: Record<string, string>;
  resources: Record<string, BlockSchema>;
  data: Record<string, BlockSchema>;
}

const schema = JSON.parse(
  readFileSync(path.join(TERRAFORM_DIR, "schema/google-provider.json"), "utf8"),
) as ProviderSchema;

/** Arguments Terraform itself gives every resource block. */
const META_ARGUMENTS = new Set([
  "count",
  "for_each",
  "depends_on",
  "lifecycle",
  "provider",
  "provisioner",
  "connection",
]);

/** The blocks of a body, `dynamic "x" { content {...} }` read as `x` blocks. */
function blocksOf(body: Body, name: string): Body[] {
  const direct = Array.isArray(body[name]) && typeof body[name][0] === "object" ? (body[name] as Body[]) : [];
  const dynamic = ((body["dynamic"]?.[name] ?? []) as Body[]).flatMap((d) => (d["content"] ?? []) as Body[]);
  return [...direct, ...dynamic];
}

/** Every problem of one block against its schema, as `where: problem` lines. */
function check(body: Body, block: BlockSchema, where: string, top: boolean): string[] {
  const problems: string[] = [];
  const dynamicNames = Object.keys(body["dynamic"] ?? {});
  for (const key of [...Object.keys(body).filter((k) => k !== "dynamic"), ...dynamicNames]) {
    if (top && META_ARGUMENTS.has(key)) continue;
    if (!(key in block.attributes) && !(key in block.blocks))
      problems.push(`${where}: unknown argument ${key}`);
  }
  for (const [name, attr] of Object.entries(block.attributes))
    if (attr.required && !(name in body)) problems.push(`${where}: missing required argument ${name}`);
  for (const [name, sub] of Object.entries(block.blocks)) {
    const found = blocksOf(body, name);
    if (sub.required && found.length === 0) problems.push(`${where}: missing required block ${name}`);
    for (const [i, b] of found.entries()) problems.push(...check(b, sub, `${where}.${name}[${i}]`, false));
  }
  return problems;
}

let tf: Terraform;
beforeAll(async () => {
  tf = await loadTerraform();
});

const locals = (): Body => tf.locals;
/** A Cloud Run memory setting (`512Mi`, `2Gi`) in MiB. */
const mebibytes = (memory: string) =>
  Number(/^(\d+)(Mi|Gi)$/.exec(memory)?.[1]) * (memory.endsWith("Gi") ? 1024 : 1);
const functionsOf = (): Record<string, Body> => tf.locals["functions"];

describe("terraform/ is well-formed", () => {
  const hasTerraform = spawnSync("terraform", ["version"], { stdio: "ignore" }).status === 0;
  it.skipIf(!hasTerraform)("is formatted (terraform fmt -check -recursive)", () => {
    const out = spawnSync("terraform", ["fmt", "-check", "-recursive", TERRAFORM_DIR], { encoding: "utf8" });
    expect(out.stdout, "files terraform fmt would change").toBe("");
    expect(out.status).toBe(0);
  });
  if (!hasTerraform)
    it("is formatted: not checked, terraform is not installed (optional on a dev machine)", () => {});

  it("is split by concern", () => {
    expect(Object.keys(tf.files).sort()).toEqual(
      [
        "ci",
        "database",
        "events",
        "functions",
        "iam",
        "lb",
        "main",
        "migrate",
        "network",
        "outputs",
        "storage",
        "variables",
      ].map((f) => `${f}.tf`),
    );
  });

  it("uses only the provider's resource types and arguments, with every required one", () => {
    const problems: string[] = [];
    for (const [kind, blocks, known] of [
      ["resource", tf.resources, schema.resources],
      ["data", tf.data, schema.data],
    ] as const)
      for (const [type, byName] of Object.entries(blocks)) {
        if (!type.startsWith("google_")) continue;
        const block = known[type];
        if (!block) {
          problems.push(`${kind} ${type}: not in the schema (run scripts/terraform-schema.ts)`);
          continue;
        }
        for (const [name, body] of Object.entries(byName))
          problems.push(...check(body, block, `${type}.${name}`, true));
      }
    expect(problems).toEqual([]);
  });

  it("documents every variable, and the example sets every one without a default", () => {
    const example = readFileSync(path.join(TERRAFORM_DIR, "terraform.tfvars.example"), "utf8");
    for (const [name, v] of Object.entries(tf.variables)) {
      expect(v["description"], name).toMatch(/\w{3}/);
      if (!("default" in v)) expect(example, name).toMatch(new RegExp(`^${name}\\s*=`, "m"));
    }
  });

  it("outputs the API URL and the issuer URL, and what the runbook needs", () => {
    expect(Object.keys(tf.outputs)).toEqual(
      expect.arrayContaining([
        "api_url",
        "issuer_url",
        "region",
        "migration_job",
        "service_accounts",
        "database_users",
        "sse_service_url",
        "internal_function_urls",
      ]),
    );
    expect(tf.outputs["migration_job"]?.["value"]).toBe(expr("google_cloud_run_v2_job.migrate.name"));
    expect(tf.outputs["sse_service_url"]?.["value"]).toBe(expr("google_cloud_run_v2_service.events.uri"));
    expect(tf.outputs["internal_function_urls"]?.["value"]).toBe(
      expr("{ for name, f in local.functions : name => local.function_url[name] if !f.public }"),
    );
    const accounts = Object.keys(tf.resources["google_service_account"] ?? {}).sort();
    expect(tf.outputs["service_accounts"]?.["value"]).toEqual(
      Object.fromEntries(accounts.map((a) => [a, expr(`google_service_account.${a}.email`)])),
    );
    const users = Object.keys(tf.resources["google_sql_user"] ?? {}).sort();
    expect(Object.keys(tf.outputs["database_users"]?.["value"]).sort()).toEqual(users);
  });
});

describe("terraform/ matches the code it deploys", () => {
  it("deploys every function of the table by its entry point, and no events bundle (the Cloud Run service streams)", () => {
    expect(Object.keys(functionsOf()).sort()).toEqual(Object.keys(cloudFunctions).sort());
    // Every public group is a function but `events`, which the SSE service serves.
    expect(Object.keys(groups).filter((g) => !(g in cloudFunctions))).toEqual(["events"]);
    const fn = resource(tf, "google_cloudfunctions2_function", "fn");
    expect(fn["for_each"]).toBe(expr("local.functions"));
    const build = (fn["build_config"] as Body[])[0] as Body;
    expect(build["entry_point"]).toBe(expr("each.key"));
    expect(build["runtime"]).toBe("nodejs24");
    expect(build["source"][0].storage_source[0].object).toBe(
      expr("google_storage_bucket_object.function_source[each.key].name"),
    );
  });

  it("sets only environment variables the configuration accepts", () => {
    const accepted = new Set(Object.keys(envSchema.shape));
    const names = [
      ...Object.keys(locals()["common_env"]),
      ...Object.keys(locals()["common_secrets"]),
      // The scheduler's own (ci.tf): the Kubernetes settings and the static worker token.
      ...[locals()["ci_worker_env"], locals()["ci_worker_secrets"]].flatMap((e: string) =>
        [...e.matchAll(/\b([A-Z][A-Z0-9_]+)\s*=/g)].map((m) => m[1] as string),
      ),
    ];
    expect(names).toEqual(
      expect.arrayContaining(["SVC_CI_K8S_API_URL", "SVC_CI_K8S_CA_FILE", "SVC_CI_WORKER_TOKEN"]),
    );
    expect(names.filter((n) => !accepted.has(n))).toEqual([]);
    const service = resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0] as Body;
    expect(service["environment_variables"]).toBe(expr("local.function_env[each.key]"));
    expect(service["dynamic"]["secret_environment_variables"][0].for_each).toBe(
      expr("local.function_secrets[each.key]"),
    );
  });

  it("gives every function Node's small young generation and two malloc arenas (docs/benchmarks.md)", () => {
    expect(locals()["node_env"]).toEqual(FUNCTION_ENV);
    expect(locals()["function_env"]).toMatch(/merge\(local\.common_env, local\.node_env,/);
  });

  it("calls real routes from Cloud Scheduler and Cloud Tasks, on internal functions", () => {
    const jobs = locals()["scheduler_jobs"] as Record<string, { function: string; path: string }>;
    expect(Object.keys(jobs).length).toBeGreaterThanOrEqual(3);
    for (const [name, job] of Object.entries(jobs)) {
      expect(isInternalFunction(job.function), name).toBe(true);
      const routes = cloudFunctions[job.function] ?? [];
      expect(
        routes.some((r) => r.method === "POST" && r.path === job.path),
        `${name}: POST ${job.path}`,
      ).toBe(true);
    }
    const scheduler = resource(tf, "google_cloud_scheduler_job", "timers");
    expect(scheduler["http_target"][0].http_method).toBe("POST");
    expect(scheduler["http_target"][0].oidc_token[0].service_account_email).toBe(
      expr("google_service_account.invoker.email"),
    );
    const target = /^\$\{local\.function_url\["(\w+)"\]\}(\/[\w-]+)$/.exec(
      locals()["common_env"].SVC_WEBHOOK_TASKS_TARGET_URL,
    );
    expect(target, "SVC_WEBHOOK_TASKS_TARGET_URL").not.toBeNull();
    const [, fn, route] = target as RegExpExecArray;
    expect(cloudFunctions[fn as string]?.some((r) => r.method === "POST" && r.path === route)).toBe(true);
  });

  it("keeps the internal functions private: internal ingress, no public invoker", () => {
    for (const [name, f] of Object.entries(functionsOf()))
      expect(f["public"], name).toBe(!isInternalFunction(name));
    const service = resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0] as Body;
    expect(service["ingress_settings"]).toBe(
      expr('each.value.public ? "ALLOW_INTERNAL_AND_GCLB" : "ALLOW_INTERNAL_ONLY"'),
    );
    // Every allUsers binding: on the public functions only, or on the SSE service.
    const publicBindings = Object.entries(tf.resources)
      .flatMap(([type, byName]) => Object.entries(byName).map(([name, body]) => ({ type, name, body })))
      .filter((r) => r.body["member"] === "allUsers" || r.body["members"]?.includes?.("allUsers"));
    expect(publicBindings.map((r) => `${r.type}.${r.name}`).sort()).toEqual([
      "google_cloud_run_service_iam_member.public_invoker",
      "google_cloud_run_v2_service_iam_member.events_public",
    ]);
    expect(publicBindings.find((r) => r.name === "public_invoker")?.body["for_each"]).toBe(
      expr("local.public_functions"),
    );
    expect(locals()["public_functions"]).toBe(
      expr("{ for name, f in local.functions : name => f if f.public }"),
    );
    const internal = resource(tf, "google_cloud_run_service_iam_member", "internal_invoker");
    expect(internal["member"]).toBe(expr("google_service_account.invoker.member"));
  });

  it("gives the repos function the memory for its request concurrency times a worst-case body", () => {
    const settings = tf.variables["function_settings"]?.["default"] as Record<string, Body>;
    const repos = settings["repos"] ?? {};
    const memoryMiB = mebibytes(String(repos["memory"]));
    const concurrency = (locals()["request_concurrency"] as Record<string, number>)["repos"] ?? 20;
    expect(resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0]).toMatchObject({
      max_instance_request_concurrency: expr("lookup(local.request_concurrency, each.key, 20)"),
    });
    // The measured cost of a 30 MiB body, scaled to the largest body a request can carry.
    const perRequest = (REPOS_COMMIT_MIB * WORST_BODY_MIB) / MEASURED_BODY_MIB;
    expect(REPOS_STARTED_MIB + concurrency * perRequest).toBeLessThanOrEqual(memoryMiB);
  });

  it("keeps 15% of max_connections free when every instance holds all its connections", () => {
    const source = (file: string) => readFileSync(path.resolve(TERRAFORM_DIR, "..", file), "utf8");
    const poolMax = Number(
      /export function createPool\([^)]*max = (\d+)\)/.exec(source("shared/db/pool.ts"))?.[1],
    );

    expect(locals()["db_pool_size"], "db_pool_size is createPool's default max").toBe(poolMax);
    const deliverers = Number(
      /new pg\.Pool\(\{[^}]*?max: (\d+),/s.exec(source("shared/webhooks/delivery.ts"))?.[1],
    );
    expect(locals()["webhook_pool_size"], "webhook_pool_size is the deliverers' pool max").toBe(deliverers);
    const settings = tf.variables["function_settings"]?.["default"] as Record<string, Body>;
    const sse = tf.variables["sse_settings"]?.["default"] as Body;
    // What the resources are sized by is what is counted here.
    const service = resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0] as Body;
    expect(service["max_instance_count"]).toBe(expr("var.function_settings[each.key].max_instances"));
    const sseTemplate = resource(tf, "google_cloud_run_v2_service", "events")["template"][0] as Body;
    expect(sseTemplate["scaling"][0].max_instance_count).toBe(expr("var.sse_settings.max_instances"));
    const flags = resource(tf, "google_sql_database_instance", "quire")["settings"][0]
      .database_flags as Body[];
    expect(flags.find((f) => f["name"] === "max_connections")?.["value"]).toBe(
      expr("tostring(var.db_max_connections)"),
    );

    const functionInstances = Object.values(settings).reduce(
      (sum, f) => sum + (f["max_instances"] as number),
      0,
    );
    const budget = {
      functionPools: functionInstances * poolMax,
      webhookDeliverers: (settings["webhookDelivery"]?.["max_instances"] as number) * deliverers,
      sse: (sse["max_instances"] as number) * (poolMax + (locals()["sse_listen_connections"] as number)),
      migrationJob: locals()["migrate_connections"] as number,
      reserved: locals()["db_reserved_connections"] as number,
    };
    // The relay's one LISTEN connection per SSE instance; the migration step's clients one at a time.
    expect(budget.sse).toBe((sse["max_instances"] as number) * (poolMax + 1));
    expect(budget.migrationJob).toBeGreaterThanOrEqual(1);
    const total = Object.values(budget).reduce((a, b) => a + b, 0);
    const maxConnections = tf.variables["db_max_connections"]?.["default"] as number;
    // docs/deploy.md, "The connection budget", states these numbers.
    expect({ ...budget, total, maxConnections }).toEqual({
      functionPools: 280,
      webhookDeliverers: 16,
      sse: 33,
      migrationJob: 1,
      reserved: 10,
      total: 340,
      maxConnections: 400,
    });
    expect(total, "at least 15% headroom").toBeLessThanOrEqual(Math.floor(maxConnections * 0.85));
    const docs = readFileSync(path.resolve(TERRAFORM_DIR, "../docs/deploy.md"), "utf8");
    expect(docs).toContain(`= ${total}`);
  });

  it("sizes every function by a variable with one entry per function", () => {
    const settings = tf.variables["function_settings"]?.["default"] as Record<string, Body>;
    expect(Object.keys(settings).sort()).toEqual(Object.keys(functionsOf()).sort());
    const service = resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0] as Body;
    expect(service["available_memory"]).toBe(expr("var.function_settings[each.key].memory"));
    expect(service["timeout_seconds"]).toBe(expr("var.function_settings[each.key].timeout_seconds"));
    // An archive download (repos) must not be cut at 60 s; the LB's serverless backends have no
    // timeout of their own, so the function's is the one that counts.
    expect(settings["repos"]?.["timeout_seconds"]).toBeGreaterThanOrEqual(300);
    expect(resource(tf, "google_compute_backend_service", "function")).not.toHaveProperty("timeout_sec");
    const job = resource(tf, "google_cloud_run_v2_job", "migrate")["template"][0].template[0] as Body;
    expect(job["timeout"]).toBe(`${expr("var.migrate_settings.timeout_seconds")}s`);
    expect(job["containers"][0].resources[0].limits.memory).toBe(expr("var.migrate_settings.memory"));
    const sse = resource(tf, "google_cloud_run_v2_service", "events")["template"][0] as Body;
    expect(sse["containers"][0].resources[0].limits.memory).toBe(expr("var.sse_settings.memory"));
  });

  it("signs job tokens with an RSA PKCS#1 2048 KMS key; services log in as IAM users, only the migrator with a password", () => {
    const key = resource(tf, "google_kms_crypto_key", "jobs");
    expect(key["purpose"]).toBe("ASYMMETRIC_SIGN");
    expect(key["version_template"][0].algorithm).toBe("RSA_SIGN_PKCS1_2048_SHA256");
    const users = tf.resources["google_sql_user"] ?? {};
    expect(
      Object.entries(users)
        .map(([name, u]) => `${name}:${u["type"]}`)
        .sort(),
    ).toEqual([
      "events:CLOUD_IAM_SERVICE_ACCOUNT",
      "functions:CLOUD_IAM_SERVICE_ACCOUNT",
      "migrator:BUILT_IN",
    ]);
  });

  it("wraps repo secrets' data keys with a symmetric KMS key only the functions may use", () => {
    const key = resource(tf, "google_kms_crypto_key", "secrets");
    expect(key["purpose"]).toBe("ENCRYPT_DECRYPT");
    const grants = Object.values(tf.resources["google_kms_crypto_key_iam_member"] ?? {}).filter(
      (g) => g["crypto_key_id"] === expr("google_kms_crypto_key.secrets.id"),
    );
    expect(grants.map((g) => [g["role"], g["member"]])).toEqual([
      ["roles/cloudkms.cryptoKeyEncrypterDecrypter", expr("google_service_account.functions.member")],
    ]);
    expect(locals()["common_env"].SVC_SECRETS_KMS_KEY).toBe(expr("google_kms_crypto_key.secrets.id"));
  });

  it("keeps the migrator's password out of the state: generated, written only to the user and its secret", () => {
    const migrator = resource(tf, "google_sql_user", "migrator");
    const generated = expr("ephemeral.random_password.db_migrator.result");
    expect(migrator["password_wo"]).toBe(generated);
    expect(migrator).not.toHaveProperty("password");
    expect(migrator["password_wo_version"]).toBe(expr("var.db_migrator_password_version"));
    const version = resource(tf, "google_secret_manager_secret_version", "db_migrator_password");
    expect(version["secret_data_wo"]).toBe(generated);
    expect(version).not.toHaveProperty("secret_data");
    expect(version["secret_data_wo_version"]).toBe(expr("var.db_migrator_password_version"));
    expect(tf.files["database.tf"]?.["ephemeral"]?.["random_password"]?.["db_migrator"]).toBeDefined();
    // Write-only arguments and ephemeral resources need Terraform 1.11.
    expect(tf.files["main.tf"]?.["terraform"][0].required_version).toBe(">= 1.11");
  });

  it("pins every provider to an exact version", () => {
    const providers = tf.files["main.tf"]?.["terraform"][0].required_providers[0] as Record<string, Body>;
    expect(Object.keys(providers).sort()).toEqual(["archive", "google", "random"]);
    for (const [name, p] of Object.entries(providers)) {
      expect(p["source"], name).toBe(`hashicorp/${name}`);
      expect(p["version"], name).toMatch(/^\d+\.\d+\.\d+$/);
    }
    // The hand-described schema entries were read from this provider version.
    expect(schema.described_by_hand?.["google_cloud_run_v2_job"]).toContain(providers["google"]?.["version"]);
  });
});

describe("the network path to Cloud SQL (terraform/network.tf)", () => {
  it("takes the IP type from a variable, the same for the functions, the SSE service and the job", () => {
    expect(tf.variables["db_ip_type"]?.["validation"][0].condition).toBe(
      expr('contains(["PUBLIC", "PRIVATE"], var.db_ip_type)'),
    );
    expect(locals()["common_env"].SVC_CLOUD_SQL_IP_TYPE).toBe(expr("var.db_ip_type"));
    expect(locals()["migrate_env"].SVC_CLOUD_SQL_IP_TYPE).toBe(expr("var.db_ip_type"));
    expect(JSON.stringify(tf.files)).not.toMatch(/SVC_CLOUD_SQL_IP_TYPE"\s*:\s*"PUBLIC"/);
    expect(locals()["private_db"]).toBe(expr('var.db_ip_type == "PRIVATE"'));
  });

  it("with PRIVATE: no public IP, private service access, a connector for the functions, Direct VPC egress for Cloud Run", () => {
    const ip = resource(tf, "google_sql_database_instance", "quire")["settings"][0]
      .ip_configuration[0] as Body;
    expect(ip["ipv4_enabled"]).toBe(expr('var.db_ip_type == "PUBLIC"'));
    expect(ip["private_network"]).toBe(expr("local.private_db ? local.vpc_network : null"));
    expect(resource(tf, "google_sql_database_instance", "quire")["depends_on"]).toContain(
      expr("google_service_networking_connection.sql"),
    );
    const range = resource(tf, "google_compute_global_address", "sql_private_range");
    expect([range["count"], range["purpose"], range["address_type"]]).toEqual([
      expr("local.private_db ? 1 : 0"),
      "VPC_PEERING",
      "INTERNAL",
    ]);
    const peering = resource(tf, "google_service_networking_connection", "sql");
    expect(peering["service"]).toBe("servicenetworking.googleapis.com");
    expect(peering["reserved_peering_ranges"]).toEqual([
      expr("google_compute_global_address.sql_private_range[0].name"),
    ]);
    expect(resource(tf, "google_vpc_access_connector", "functions")["count"]).toBe(
      expr("local.private_db ? 1 : 0"),
    );
    const service = resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0] as Body;
    expect(service["vpc_connector"]).toBe(
      expr("local.private_db ? google_vpc_access_connector.functions[0].id : null"),
    );
    expect(service["vpc_connector_egress_settings"]).toBe(
      expr('local.private_db ? "PRIVATE_RANGES_ONLY" : null'),
    );
    const sse = resource(tf, "google_cloud_run_v2_service", "events")["template"][0] as Body;
    const job = resource(tf, "google_cloud_run_v2_job", "migrate")["template"][0].template[0] as Body;
    for (const template of [sse, job]) {
      const egress = template["dynamic"]["vpc_access"][0] as Body;
      expect(egress["for_each"]).toBe(expr("local.private_db ? [var.subnetwork] : []"));
      expect(egress["content"][0].egress).toBe("PRIVATE_RANGES_ONLY");
      expect(egress["content"][0].network_interfaces[0].network).toBe(expr("var.network"));
    }
    const apis = locals()["required_apis"] as string[];
    expect(apis).toEqual(
      expect.arrayContaining(["servicenetworking.googleapis.com", "vpcaccess.googleapis.com"]),
    );
  });
});

describe("the load balancer's plain HTTP and the builds", () => {
  it("answers port 80 of the same address with a redirect to HTTPS", () => {
    const map = resource(tf, "google_compute_url_map", "http_redirect");
    expect(map["default_url_redirect"][0]).toMatchObject({ https_redirect: true, strip_query: false });
    expect(map).not.toHaveProperty("default_service");
    const proxy = resource(tf, "google_compute_target_http_proxy", "http_redirect");
    expect(proxy["url_map"]).toBe(expr("google_compute_url_map.http_redirect.id"));
    const rule = resource(tf, "google_compute_global_forwarding_rule", "http_redirect");
    const https = resource(tf, "google_compute_global_forwarding_rule", "api");
    expect(rule["target"]).toBe(expr("google_compute_target_http_proxy.http_redirect.id"));
    expect(rule["port_range"]).toBe("80");
    expect(rule["ip_address"]).toBe(https["ip_address"]);
    expect(rule["load_balancing_scheme"]).toBe(https["load_balancing_scheme"]);
  });

  it("builds the functions as a build account of their own with the roles a gen2 build needs", () => {
    const build = resource(tf, "google_cloudfunctions2_function", "fn")["build_config"][0] as Body;
    expect(build["service_account"]).toBe(expr("google_service_account.build.id"));
    expect(resource(tf, "google_project_iam_member", "build")["for_each"]).toBe(
      expr('toset(["roles/logging.logWriter", "roles/artifactregistry.writer"])'),
    );
    const sources = resource(tf, "google_storage_bucket_iam_member", "build_sources");
    expect([sources["bucket"], sources["role"], sources["member"]]).toEqual([
      expr("google_storage_bucket.sources.name"),
      "roles/storage.objectViewer",
      expr("google_service_account.build.member"),
    ]);
    expect(resource(tf, "google_cloudfunctions2_function", "fn")["depends_on"]).toContain(
      expr("google_project_iam_member.build"),
    );
  });
});

describe("the SSE service (terraform/events.tf)", () => {
  it("runs the container image's default entry, one instance always up with CPU between requests", () => {
    const template = resource(tf, "google_cloud_run_v2_service", "events")["template"][0] as Body;
    expect(template["containers"][0].image).toBe(expr("var.container_image"));
    expect(template["containers"][0].command).toBeUndefined(); // the Dockerfile's CMD: node sse.js
    expect(template["containers"][0].resources[0].cpu_idle).toBe(false);
    expect(template["scaling"][0].min_instance_count).toBe(1);
    expect(template["timeout"]).toBe(`${expr("var.sse_settings.timeout_seconds")}s`);
    expect(tf.variables["sse_settings"]?.["default"].timeout_seconds).toBe(3600);
  });

  it("mounts no secret (the streams use none) and may read the job key's public half", () => {
    const template = resource(tf, "google_cloud_run_v2_service", "events")["template"][0] as Body;
    expect(JSON.stringify(template)).not.toMatch(/secret/);
    expect(tf.resources["google_secret_manager_secret_iam_member"]?.["events"]).toBeUndefined();
    const viewer = resource(tf, "google_kms_crypto_key_iam_member", "events_jobs_viewer");
    expect(viewer["role"]).toBe("roles/cloudkms.publicKeyViewer");
    expect(viewer["member"]).toBe(expr("google_service_account.events.member"));
    expect(viewer["crypto_key_id"]).toBe(expr("google_kms_crypto_key.jobs.id"));
  });
});

describe("the migration job (terraform/migrate.tf)", () => {
  const job = () => resource(tf, "google_cloud_run_v2_job", "migrate");
  const task = () => job()["template"][0].template[0] as Body;
  const container = () => task()["containers"][0] as Body;

  it("runs the container image's migrate entry, the image the SSE service runs", () => {
    const [node, entry, ...rest] = container()["command"] as string[];
    expect(node).toBe("node");
    expect(rest).toEqual([]);
    expect(Object.keys(CONTAINER_ENTRIES).map((e) => `${e}.js`)).toContain(entry);
    expect(entry).toBe("migrate.js");
    // The Dockerfile's CMD is the other entry: the job overrides it, the service keeps it.
    expect(readFileSync(DOCKERFILE, "utf8")).toMatch(/^CMD \["node", "sse\.js"\]$/m);
    const events = resource(tf, "google_cloud_run_v2_service", "events")["template"][0].containers[0];
    expect(container()["image"]).toBe(expr("var.container_image"));
    expect(events.image).toBe(expr("var.container_image"));
    expect(job()["template"][0].task_count).toBe(1);
    expect(task()["max_retries"]).toBe(0);
  });

  it("reaches Cloud SQL through the connector as the built-in schema owner, with settings the configuration accepts", () => {
    const env = locals()["migrate_env"] as Record<string, string>;
    const secrets = locals()["migrate_secrets"] as Record<string, string>;
    const accepted = new Set(Object.keys(envSchema.shape));
    expect([...Object.keys(env), ...Object.keys(secrets)].filter((n) => !accepted.has(n))).toEqual([]);
    expect(env["SVC_CLOUD_SQL_INSTANCE"]).toBe(expr("google_sql_database_instance.quire.connection_name"));
    expect(env["SVC_CLOUD_SQL_IP_TYPE"]).toBe(expr("var.db_ip_type"));
    expect(env).not.toHaveProperty("DATABASE_URL");
    expect(env).not.toHaveProperty("SVC_DB_IAM_USER");
    expect(env["SVC_DB_USER"]).toBe(expr("google_sql_user.migrator.name"));
    expect(secrets).toEqual({
      SVC_DB_PASSWORD: expr("google_secret_manager_secret.db_migrator_password.secret_id"),
    });
    // The services' own IAM users get their rights from the job.
    expect(env["SVC_DB_APP_USERS"]).toBe(locals()["common_env"].SVC_DB_IAM_USER);
    expect(env["SVC_DB_APP_USERS"]).toBe(expr("google_sql_user.functions.name"));
    expect(env["SVC_DB_STREAM_USERS"]).toBe(expr("google_sql_user.events.name"));
    const envBlocks = container()["dynamic"]["env"] as Body[];
    expect(envBlocks.map((b) => b["for_each"])).toEqual([
      expr("local.migrate_env"),
      expr("local.migrate_secrets"),
    ]);
    expect(envBlocks[1]?.["content"][0].value_source[0].secret_key_ref[0].secret).toBe(expr("env.value"));
    // The loader refuses what is not set: every setting it must have is here.
    const parsed = envSchema.safeParse({
      ...Object.fromEntries(
        Object.entries(env).map(([k, v]) => [
          k,
          v.startsWith("${")
            ? ({ SVC_CLOUD_SQL_INSTANCE: "p:r:i", SVC_CLOUD_SQL_IP_TYPE: "PRIVATE" }[k] ?? "quire-x@p.iam")
            : v,
        ]),
      ),
      SVC_DB_PASSWORD: "from-secret-manager",
    });
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  });

  it("has least privilege: its own identity, one secret, no IAM binding on the job (only the operator executes it)", () => {
    expect(task()["service_account"]).toBe(expr("google_service_account.migrate.email"));
    const onJob = Object.entries(tf.resources)
      .filter(([type]) => type.startsWith("google_cloud_run_v2_job_iam"))
      .flatMap(([, byName]) => Object.keys(byName));
    expect(onJob).toEqual([]);
    // Password login needs the connector's Admin API calls, not IAM database login.
    const sqlClient = resource(tf, "google_project_iam_member", "migrate_sql_client");
    expect([sqlClient["role"], sqlClient["member"]]).toEqual([
      "roles/cloudsql.client",
      expr("google_service_account.migrate.member"),
    ]);
    const secret = resource(tf, "google_secret_manager_secret_iam_member", "migrate");
    expect([secret["secret_id"], secret["role"], secret["member"]]).toEqual([
      expr("google_secret_manager_secret.db_migrator_password.secret_id"),
      "roles/secretmanager.secretAccessor",
      expr("google_service_account.migrate.member"),
    ]);
    // Nobody else reads the migrator's password; the migrate account gets nothing else.
    const mentions = Object.entries(tf.resources).flatMap(([type, byName]) =>
      Object.entries(byName)
        .filter(([, body]) => JSON.stringify(body).includes("google_service_account.migrate."))
        .map(([name]) => `${type}.${name}`),
    );
    expect(mentions.sort()).toEqual([
      "google_cloud_run_v2_job.migrate",
      "google_project_iam_member.migrate_sql_client",
      "google_secret_manager_secret_iam_member.migrate",
    ]);
    const functionSecrets = Object.values(locals()["common_secrets"] as Record<string, string>);
    expect(functionSecrets.join()).not.toContain("db_migrator_password");
    expect(job()["depends_on"]).toContain(expr("google_project_iam_member.migrate_sql_client"));
  });
});
