import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { CheckResult } from "../../worker/check/types.ts";
import type { ImageLimits } from "../../worker/image/layers.ts";
import type { CliEnv } from "../env.ts";
import { CliError, usageError } from "../errors.ts";
import type { Column } from "../output.ts";
import { findCopyRoot, META_DIR, readConfig } from "../workcopy/meta.ts";

export interface LocalRunOptions {
  branch?: string;
  network: string;
  timeout: string;
}

interface LocalResult {
  check: string;
  status: "passed" | "failed" | "skipped";
  summary: string;
  log: string | null;
}

const COLUMNS: Column<LocalResult>[] = [
  { header: "check", value: (r) => r.check },
  { header: "status", value: (r) => r.status, kind: "state" },
  { header: "summary", value: (r) => r.summary },
  { header: "log", value: (r) => r.log },
];

/** The folder to run: the working copy holding the current folder, else the current folder itself. */
async function sourceRoot(cwd: string): Promise<{ root: string; branch: string | null }> {
  try {
    const root = await findCopyRoot(cwd);
    return { root, branch: (await readConfig(root)).branch };
  } catch {
    return { root: cwd, branch: null };
  }
}

function parseLimits(opts: LocalRunOptions): { network: "none" | "on"; timeoutMs: number } {
  if (opts.network !== "none" && opts.network !== "on")
    throw usageError(`--network must be none or on, not "${opts.network}"`);
  const minutes = Number(opts.timeout);
  if (!Number.isFinite(minutes) || minutes <= 0)
    throw usageError(`--timeout must be a positive number of minutes, not "${opts.timeout}"`);
  return { network: opts.network, timeoutMs: minutes * 60_000 };
}

/**
 * `quire ci run --local`: the checks of this folder's `.svc/ci.yaml`, chosen by their `if:` for a
 * manual run, run on this machine by the CI worker's own runner (image pull, bubblewrap sandbox,
 * logs), not by the server. The source is what is on disk, uncommitted changes included; each
 * check's log is kept under `.quire/ci/` of a working copy, or in a temporary folder it names.
 */
export async function runLocal(env: CliEnv, opts: LocalRunOptions): Promise<void> {
  const limits = parseLimits(opts);
  const { root, branch } = await sourceRoot(env.cwd);
  // The config parser, the `if:` evaluator and the runner load only here: other commands start
  // without zod and the sandbox code.
  const { CI_CONFIG_PATH, describeConfigErrors } = await import("../../shared/ci/config/file.ts");
  const { parseCiConfig } = await import("../../shared/ci/config/parse.ts");
  const { checksToRun } = await import("../../shared/ci/config/triggers.ts");
  const text = await readFile(path.join(root, CI_CONFIG_PATH), "utf8").catch(() => {
    throw new CliError(`no ${CI_CONFIG_PATH} in ${root}`, {
      hint: "run it in a folder with a CI configuration",
    });
  });
  const parsed = parseCiConfig(text);
  if (!parsed.ok) throw new CliError(`${CI_CONFIG_PATH} is invalid:\n${describeConfigErrors(parsed.errors)}`);
  const event = { type: "manual", branch: opts.branch ?? branch ?? "main", base_branch: "", proposal_id: "" };
  const chosen = checksToRun(parsed.config, event);

  const work = await mkdtemp(path.join(os.tmpdir(), "quire-ci-local-"));
  try {
    const source = path.join(work, "src");
    const meta = path.join(root, META_DIR);
    // Links stay as written (verbatim): without it, Node makes each relative target an absolute
    // path of this machine, which inside the sandbox leads nowhere and tells a step where the
    // folder is.
    await cp(root, source, { recursive: true, verbatimSymlinks: true, filter: (from) => from !== meta });
    const results = await runChecks(env, chosen, source, limits);
    const logDir = branch === null ? path.join(work, "logs") : path.join(root, META_DIR, "ci");
    const rows = await keepLogs(results, logDir);
    const skipped = parsed.config.checks.filter((c) => !chosen.includes(c));
    for (const c of skipped)
      rows.push({ check: c.name, status: "skipped", summary: `if: ${c.if}`, log: null });
    env.out.table(rows, COLUMNS);
    if (rows.some((r) => r.status === "failed")) {
      const plain = plainHttpRegistries(results);
      throw new CliError("some checks failed", {
        hint:
          plain.length > 0
            ? `the registry ${plain.join(", ")} does not answer TLS; if it serves plain HTTP, name it in SVC_CI_INSECURE_REGISTRIES (comma-separated host:port), e.g. SVC_CI_INSECURE_REGISTRIES=${plain.join(",")}`
            : "read the failed checks' logs: the table names each file",
      });
    }
  } finally {
    // Outside a working copy the logs stay in the temporary folder the table names.
    await rm(branch === null ? path.join(work, "src") : work, { recursive: true, force: true });
  }
}

/**
 * How old a copy must be before a run removes it when its maker cannot be checked from here (a
 * process of another pid namespace sharing the temporary directory): past the longest check
 * timeout a worker allows (24 hours).
 */
const LOCAL_STALE_AFTER_MS = 25 * 3_600_000;

async function runChecks(
  env: CliEnv,
  checks: { name: string; image: string; steps: string[] }[],
  sourceDir: string,
  limits: { network: "none" | "on"; timeoutMs: number },
): Promise<{ name: string; result: CheckResult }[]> {
  const { createCheckRunner } = await import("../../worker/check/runner.ts");
  const { imageLimitsFromEnv } = await import("../../worker/image/limits-env.ts");
  let imageLimits: ImageLimits;
  try {
    imageLimits = imageLimitsFromEnv(env.env);
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const insecure = (env.env["SVC_CI_INSECURE_REGISTRIES"] ?? "").split(",").filter((s) => s.trim() !== "");
  // Each check's copy of the source goes here; a run killed outright (^C twice, a closed terminal)
  // left its copies there, and maybe an image half unpacked in the cache: the next run removes them.
  const stagingDir = os.tmpdir();
  const cacheDir = env.env["SVC_CI_CACHE_DIR"] ?? path.join(os.homedir(), ".cache", "quire", "images");
  const { removeStaleDirectories } = await import("../../worker/owned-directory.ts");
  for (const directory of [stagingDir, path.join(cacheDir, "tmp")])
    await removeStaleDirectories(directory, LOCAL_STALE_AFTER_MS).catch(() => []);
  const runCheck = createCheckRunner({
    cacheDir,
    insecureRegistries: insecure.map((s) => s.trim()),
    imageLimits,
    stagingDir,
    ...(env.env["SVC_CI_DOCKER_CONFIG"] ? { dockerConfigPath: env.env["SVC_CI_DOCKER_CONFIG"] } : {}),
  });
  if (!env.out.json) env.out.note(`running ${checks.map((c) => c.name).join(", ") || "no checks"}`);
  return Promise.all(
    checks.map(async (check) => {
      const result = await runCheck({
        check: { name: check.name, image: check.image, steps: check.steps },
        sourceDir,
        limits: { ...limits, logCapBytes: 10 * 1024 * 1024 },
        // No job runs here, so there is no job identity to hand the steps.
        jobToken: "",
        secrets: [],
      });
      if (!env.out.json) env.out.note(`  ${check.name}: ${env.out.state(result.conclusion)}`);
      return { name: check.name, result };
    }),
  );
}

async function keepLogs(
  results: { name: string; result: CheckResult }[],
  dir: string,
): Promise<LocalResult[]> {
  await mkdir(dir, { recursive: true });
  return Promise.all(
    results.map(async ({ name, result }) => {
      const file = path.join(dir, `${name.replace(/[^A-Za-z0-9._-]/g, "_")}.log`);
      await writeFile(file, result.log);
      return { check: name, status: result.conclusion, summary: result.summary, log: file };
    }),
  );
}

/**
 * Registries an image pull reached but could not speak TLS with (OpenSSL's "wrong version
 * number": a plain-HTTP server answering a handshake), from the checks' logs.
 */
function plainHttpRegistries(results: { result: CheckResult }[]): string[] {
  const hosts = new Set<string>();
  for (const { result } of results) {
    const m = /cannot reach registry (\S+): .*(wrong version number|SSL routines|EPROTO)/.exec(
      result.log.toString("utf8"),
    );
    if (m?.[1]) hosts.add(m[1]);
  }
  return [...hosts];
}
