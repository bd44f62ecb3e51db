import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Body, loadTerraform } from "../fast/deploy/terraform.ts";

/**
 * What terraform/ gives each function, evaluated by terraform itself: its variables and locals,
 * copied into a configuration without resources or providers (so `terraform console` runs without
 * `terraform init`, which needs the registry), with every reference to a resource or data source
 * replaced by the string `res:<reference>`, for the caller to stand in for.
 */

/** Per function entry point: its environment, its Secret Manager variables and its secret files. */
export interface FunctionSettings {
  env: Record<string, Record<string, string>>;
  secrets: Record<string, Record<string, string>>;
  files: Record<string, Record<string, { mount_path: string; path: string; secret: string }>>;
  /** `local.function_url`: each function's run.app URL, as the queue and the scheduler jobs use it. */
  urls: Record<string, string>;
  /** The migration job's environment and secrets (terraform/migrate.tf). */
  migrate: { env: Record<string, string>; secrets: Record<string, string> };
  /** The SSE service's environment (terraform/events.tf: SSE_ENV_EXPRESSION). */
  sse: Record<string, string>;
}

/** How terraform/events.tf sets the SSE service's environment, evaluated here as it stands there. */
export const SSE_ENV_EXPRESSION =
  "merge(local.common_env, { SVC_DB_IAM_USER = google_sql_user.events.name })";

const RESOURCE_REF = /\b((?:data\.)?google_[a-z0-9_]+\.[a-z0-9_]+(?:\[[^\]]+\])?(?:\.[a-z0-9_]+)+)/g;

/** A copy of `value` whose interpolations name no resource: each reference becomes `"res:<ref>"`. */
function standIns(value: unknown): unknown {
  if (typeof value === "string")
    return value.replace(/\$\{([\s\S]*?)\}(?=[^}]*(?:\$\{|$))/g, (whole) =>
      whole.replace(RESOURCE_REF, (ref) => `"res:${ref.replaceAll('"', "'")}"`),
    );
  if (Array.isArray(value)) return value.map(standIns);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, standIns(v)]));
  return value;
}

export async function terraformSettings(vars: Record<string, string | boolean>): Promise<FunctionSettings> {
  const tf = await loadTerraform();
  const variable: Record<string, Body> = {};
  for (const [name, v] of Object.entries(tf.variables))
    variable[name] = "default" in v ? { default: v["default"] } : {};
  const locals = standIns(tf.locals) as Body;
  const dir = await mkdtemp(path.join(tmpdir(), "quire-tf-"));
  try {
    await writeFile(path.join(dir, "main.tf.json"), JSON.stringify({ variable, locals }));
    await writeFile(path.join(dir, "terraform.tfvars.json"), JSON.stringify(vars));
    const out = await run(
      "terraform",
      ["console"],
      dir,
      `jsonencode({ env = local.function_env, secrets = local.function_secrets, files = local.function_secret_files, urls = local.function_url, migrate = { env = local.migrate_env, secrets = local.migrate_secrets }, sse = ${String(standIns(`\${${SSE_ENV_EXPRESSION}}`)).slice(2, -1)} })\n`,
    );
    const line = out.trim().split("\n").at(-1) ?? "";
    return JSON.parse(JSON.parse(line)) as FunctionSettings;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function run(command: string, args: string[], cwd: string, input: string): Promise<string> {
  const child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c));
  child.stderr.on("data", (c: Buffer) => (stderr += c));
  child.stdin.end(input);
  const [code] = (await once(child, "exit").catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
    throw new Error(`${command} is not on PATH: the tests evaluate terraform/ with \`terraform console\``);
  })) as [number | null];
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} failed (${code}): ${stderr}${stdout}`);
  return stdout;
}

/** What stands in, on this machine, for what terraform names but only the cloud has. */
export interface StandIns {
  /** `https://<domain>`, and the load balancer's URL that replaces it. */
  publicUrl: string;
  lbUrl: string;
  /** The URL of each function's process, for its run.app URL (port 1, refusing all, if absent). */
  functionUrls: Record<string, string>;
  /** The value of each resource reference (`google_sql_user.functions.name`). */
  references: Record<string, string>;
  /** The value of each Secret Manager secret, by the variable it is mounted as. */
  secrets: Record<string, string>;
  /** Where the mounted secret files go, and each one's content by its secret's reference. */
  fileDir: string;
  files?: Record<string, string>;
}

/**
 * One process's environment: terraform's `env`, `secrets` and `files` (as FunctionSettings holds
 * them for one target) with every cloud name replaced by its stand-in. A reference without a
 * stand-in fails, so a resource terraform starts to pass must be taught to the tests.
 */
export async function localEnv(
  settings: FunctionSettings,
  unit: {
    env: Record<string, string>;
    secrets?: Record<string, string>;
    files?: FunctionSettings["files"][string];
  },
  s: StandIns,
): Promise<Record<string, string>> {
  const local = (value: string) => {
    let out = value.replaceAll(s.publicUrl, s.lbUrl);
    for (const [name, url] of Object.entries(settings.urls))
      out = out.replaceAll(url, s.functionUrls[name] ?? "http://127.0.0.1:1");
    for (const [ref, standIn] of Object.entries(s.references)) out = out.replaceAll(`res:${ref}`, standIn);
    return out;
  };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(unit.env)) env[k] = local(v);
  for (const k of Object.keys(unit.secrets ?? {})) {
    const value = s.secrets[k];
    if (value === undefined) throw new Error(`no stand-in value for the secret ${k}`);
    env[k] = value;
  }
  for (const file of Object.values(unit.files ?? {})) {
    const dir = path.join(s.fileDir, file.mount_path);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, file.path), s.files?.[file.secret.replace(/^res:/, "")] ?? "");
    for (const [k, v] of Object.entries(env))
      if (v.startsWith(`${file.mount_path}/`)) env[k] = path.join(dir, v.slice(file.mount_path.length + 1));
  }
  const unresolved = Object.entries(env).filter(([, v]) => v.includes("res:"));
  if (unresolved.length > 0)
    throw new Error(`no stand-in for ${unresolved.map(([k, v]) => `${k}=${v}`).join(", ")}`);
  return env;
}
