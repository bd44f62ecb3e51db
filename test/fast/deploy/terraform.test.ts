import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cloudFunctions, isInternalFunction } from "../../../functions/groups.ts";
import { CONTAINER_ENTRIES, DOCKERFILE } from "../../../scripts/build.ts";
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

  it("outputs the API URL and the issuer URL", () => {
    expect(Object.keys(tf.outputs)).toEqual(expect.arrayContaining(["api_url", "issuer_url"]));
  });
});

describe("terraform/ matches the code it deploys", () => {
  it("deploys every function of the table (events as the Cloud Run service), by its entry point", () => {
    const deployed = [...Object.keys(functionsOf()), "events"].sort();
    expect(deployed).toEqual(Object.keys(cloudFunctions).sort());
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
    const names = [...Object.keys(locals()["common_env"]), ...Object.keys(locals()["common_secrets"])];
    expect(names.filter((n) => !accepted.has(n))).toEqual([]);
    const service = resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0] as Body;
    expect(service["environment_variables"]).toBe(expr("local.common_env"));
    expect(service["dynamic"]["secret_environment_variables"][0].for_each).toBe(expr("local.common_secrets"));
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
    const repos = functionsOf()["repos"] ?? {};
    const memoryMiB = mebibytes(String(repos["memory"]));
    const concurrency = (locals()["request_concurrency"] as Record<string, number>)["repos"] ?? 20;
    expect(resource(tf, "google_cloudfunctions2_function", "fn")["service_config"][0]).toMatchObject({
      max_instance_request_concurrency: expr("lookup(local.request_concurrency, each.key, 20)"),
    });
    // The measured cost of a 30 MiB body, scaled to the largest body a request can carry.
    const perRequest = (REPOS_COMMIT_MIB * WORST_BODY_MIB) / MEASURED_BODY_MIB;
    expect(REPOS_STARTED_MIB + concurrency * perRequest).toBeLessThanOrEqual(memoryMiB);
  });

  it("fits every instance's connection pool under the database's max_connections", () => {
    const poolSource = readFileSync(path.resolve(TERRAFORM_DIR, "../shared/db/pool.ts"), "utf8");
    const poolMax = Number(/export function createPool\([^)]*max = (\d+)\)/.exec(poolSource)?.[1]);
    expect(locals()["db_pool_size"], "db_pool_size is createPool's default max").toBe(poolMax);
    const instances =
      Object.values(functionsOf()).reduce((sum: number, f) => sum + (f["max_instances"] as number), 0) +
      (locals()["events_max_instances"] as number);
    const flags = resource(tf, "google_sql_database_instance", "quire")["settings"][0]
      .database_flags as Body[];
    const flag = flags.find((f) => f["name"] === "max_connections");
    expect(flag?.["value"]).toBe(expr("tostring(var.db_max_connections)"));
    const maxConnections = tf.variables["db_max_connections"]?.["default"] as number;
    // Cloud SQL keeps some connections for itself and for migrations run by hand.
    const reserved = 10;
    expect(instances * poolMax + reserved).toBeLessThanOrEqual(maxConnections);
  });

  it("signs job tokens with an RSA PKCS#1 2048 KMS key and keeps IAM database users", () => {
    const key = resource(tf, "google_kms_crypto_key", "jobs");
    expect(key["purpose"]).toBe("ASYMMETRIC_SIGN");
    expect(key["version_template"][0].algorithm).toBe("RSA_SIGN_PKCS1_2048_SHA256");
    for (const user of Object.values(tf.resources["google_sql_user"] ?? {}))
      expect(user["type"]).toBe("CLOUD_IAM_SERVICE_ACCOUNT");
  });
});

describe("the SSE service (terraform/events.tf)", () => {
  it("runs the container image's default entry, one instance always up with CPU between requests", () => {
    const template = resource(tf, "google_cloud_run_v2_service", "events")["template"][0] as Body;
    expect(template["containers"][0].image).toBe(expr("var.container_image"));
    expect(template["containers"][0].command).toBeUndefined(); // the Dockerfile's CMD: node sse.js
    expect(template["containers"][0].resources[0].cpu_idle).toBe(false);
    expect(template["scaling"][0].min_instance_count).toBe(1);
    expect(template["timeout"]).toBe("3600s");
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

  it("reaches Cloud SQL through the connector as the schema owner's IAM user, with settings the configuration accepts", () => {
    const env = locals()["migrate_env"] as Record<string, string>;
    const accepted = new Set(Object.keys(envSchema.shape));
    expect(Object.keys(env).filter((n) => !accepted.has(n))).toEqual([]);
    expect(env["SVC_CLOUD_SQL_INSTANCE"]).toBe(expr("google_sql_database_instance.quire.connection_name"));
    expect(env).not.toHaveProperty("DATABASE_URL");
    // The same user as the functions (they use the tables it creates), logged in by the job's
    // own identity: the service account whose database user that is.
    expect(env["SVC_DB_IAM_USER"]).toBe(locals()["common_env"].SVC_DB_IAM_USER);
    expect(env["SVC_DB_IAM_USER"]).toBe(expr("google_sql_user.functions.name"));
    expect(resource(tf, "google_sql_user", "functions")["name"]).toContain(
      "google_service_account.functions.email",
    );
    expect(task()["service_account"]).toBe(expr("google_service_account.functions.email"));
    // The SSE service's own database user gets its rights from the job.
    expect(env["SVC_DB_STREAM_USERS"]).toBe(expr("google_sql_user.events.name"));
    const envBlocks = container()["dynamic"]["env"][0];
    expect(envBlocks.for_each).toBe(expr("local.migrate_env"));
    // The loader refuses what is not set: every setting it must have is here.
    const parsed = envSchema.safeParse(
      Object.fromEntries(
        Object.entries(env).map(([k, v]) => [
          k,
          v.startsWith("${") ? (k === "SVC_CLOUD_SQL_INSTANCE" ? "p:r:i" : "quire-x@p.iam") : v,
        ]),
      ),
    );
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  });

  it("has least privilege: no secrets, no IAM binding on the job (only the operator executes it), Cloud SQL roles on its identity", () => {
    expect(container()["dynamic"]["env"]).toHaveLength(1);
    expect(JSON.stringify(job())).not.toMatch(/secret/);
    const onJob = Object.entries(tf.resources)
      .filter(([type]) => type.startsWith("google_cloud_run_v2_job_iam"))
      .flatMap(([, byName]) => Object.keys(byName));
    expect(onJob).toEqual([]);
    // The Cloud SQL roles the job needs are granted to its identity.
    const db = resource(tf, "google_project_iam_member", "db");
    expect(db["for_each"]).toMatch(
      /"roles\/cloudsql\.client", "roles\/cloudsql\.instanceUser"\], \[[^\]]*"functions"/,
    );
    expect(job()["depends_on"]).toContain(expr("google_project_iam_member.db"));
  });
});
