import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
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
}

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
      "jsonencode({ env = local.function_env, secrets = local.function_secrets, files = local.function_secret_files, urls = local.function_url })\n",
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
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} failed (${code}): ${stderr}${stdout}`);
  return stdout;
}
