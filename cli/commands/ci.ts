import type { Command } from "commander";
import type { JobResponse } from "../../shared/api/ci.ts";
import type { CheckRunResponse } from "../../shared/api/review.ts";
import type { QuireClient } from "../client/index.ts";
import type { CliEnv } from "../env.ts";
import { CliError, usageError } from "../errors.ts";
import { findCopyRoot, readConfig } from "../workcopy/meta.ts";
import { runLocal } from "./ci-local.ts";
import { CHECK } from "./review.ts";

/** The working copy's `.quire/copy.json` around `cwd`, if there is one. */
const copyConfig = (cwd: string) => findCopyRoot(cwd).then(readConfig, () => undefined);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How often a followed run is polled; QUIRE_POLL_MS overrides (tests). */
const pollMs = (env: CliEnv) => {
  const v = Number(env.env["QUIRE_POLL_MS"]);
  return Number.isFinite(v) && v > 0 ? v : 1000;
};

/** How long a followed run may wait: when to say no worker claimed it, when to stop following. */
interface FollowLimits {
  waitHintAfterMs: number;
  timeoutMs: number | null;
}

const DEFAULT_LIMITS: FollowLimits = { waitHintAfterMs: 30_000, timeoutMs: null };

/** What to do when a run sits in the queue: a worker claims jobs, and none may be running. */
const noWorkerHint = (id: string, waitedMs: number) =>
  `no CI worker has claimed run ${id.slice(0, 8)} after ${Math.round(waitedMs / 1000)} s. ` +
  "Start one from the server's checkout: `SVC_CI_WORKER_TOKEN=… npm run worker` " +
  '(README, "The CI worker"). Still waiting; Ctrl-C stops following (the run stays queued).';

/**
 * This run's check reports. A check run is one row per (branch, sequence, check) that each report
 * replaces, so an earlier run of the same commit left rows that look like this one's: only the
 * ones reported since this run was created are its own.
 */
async function checksOfRun(client: QuireClient, repo: string, job: JobResponse): Promise<CheckRunResponse[]> {
  const { check_runs } = await client.get("/repos/:repo*/-/branch/:branch*/checks", {
    params: { repo, branch: job.branch },
    query: { at: String(job.sequence) },
  });
  const since = Date.parse(job.created_at);
  return check_runs.filter(
    (c) =>
      job.checks.includes(c.check_name) && c.sequence === job.sequence && Date.parse(c.updated_at) >= since,
  );
}

/**
 * Follows a CI run to its end: prints the job's state as it changes and each check's status as
 * it is reported, then the final table with each check's log link. Exit code 1 when it failed.
 * A run still unclaimed after `waitHintAfterMs` gets one note saying how to start a worker.
 */
async function followRun(
  env: CliEnv,
  client: QuireClient,
  repo: string,
  id: string,
  limits: FollowLimits = DEFAULT_LIMITS,
): Promise<void> {
  const out = env.out;
  const seen = new Map<string, string>();
  const started = Date.now();
  let lastStatus = "";
  let hinted = false;
  for (;;) {
    const job = await client.get("/run/:id", { params: { id } });
    if (job.status !== lastStatus && !out.json) {
      lastStatus = job.status;
      out.note(
        `${out.c.dim(new Date().toLocaleTimeString("en-GB"))} run ${id.slice(0, 8)} ${out.state(job.status)}`,
      );
    }
    const runs = await checksOfRun(client, repo, job);
    for (const c of runs)
      if (seen.get(c.check_name) !== c.status && !out.json) {
        seen.set(c.check_name, c.status);
        out.note(`  ${c.check_name}: ${out.state(c.status)}${c.log_url ? `  ${out.c.dim(c.log_url)}` : ""}`);
      }
    if (job.status === "passed" || job.status === "failed") {
      if (out.json) out.writeJson({ run: job, check_runs: runs });
      else {
        out.table(runs, CHECK);
        out.line(
          job.status === "passed"
            ? out.c.green("run passed")
            : out.c.red(`run failed${job.error ? `: ${job.error}` : ""}`),
        );
      }
      if (job.status === "failed")
        throw new CliError(`CI run ${id} failed`, { hint: "open the failed checks' logs above" });
      return;
    }
    const waited = Date.now() - started;
    if (job.status === "queued" && !hinted && waited >= limits.waitHintAfterMs) {
      hinted = true;
      out.note(`${out.c.yellow("note:")} ${noWorkerHint(id, waited)}`);
    }
    if (limits.timeoutMs !== null && waited >= limits.timeoutMs)
      throw new CliError(`stopped following CI run ${id}: still ${job.status} after --timeout`, {
        hint: `the run goes on; follow it again with \`quire ci view ${repo} ${id} --watch\``,
      });
    await sleep(pollMs(env));
  }
}

/** `--wait-hint-after <seconds>` and `--timeout <minutes>` of a followed run. */
function followLimits(opts: { waitHintAfter: string; timeout?: string }): FollowLimits {
  const seconds = Number(opts.waitHintAfter);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw usageError(`--wait-hint-after must be a number of seconds, not "${opts.waitHintAfter}"`);
  if (opts.timeout === undefined) return { waitHintAfterMs: seconds * 1000, timeoutMs: null };
  const minutes = Number(opts.timeout);
  if (!Number.isFinite(minutes) || minutes <= 0)
    throw usageError(`--timeout must be a positive number of minutes, not "${opts.timeout}"`);
  return { waitHintAfterMs: seconds * 1000, timeoutMs: minutes * 60_000 };
}

interface RunOptions {
  branch?: string;
  follow: boolean;
  local?: boolean;
  network: string;
  timeout?: string;
  waitHintAfter: string;
}

/** `quire ci run`, `quire ci run --local`, `quire ci view`. */
export function register(program: Command, env: CliEnv): void {
  const ci = program.command("ci").description("continuous integration: manual runs and their results");
  ci.command("run [repo]")
    .description(
      "queue a manual CI run of a branch's head and follow it to its end; --local: run this folder's checks on this machine",
    )
    .option("-b, --branch <branch>", "the branch (default: the working copy's, else main)")
    .option("--no-follow", "print the run id and return at once")
    .option("--local", "run the checks of this folder's .svc/ci.yaml here, in the CI worker's sandbox")
    .option("--network <mode>", "with --local: none or on", "none")
    .option(
      "--timeout <minutes>",
      "stop following after this long (the run goes on); with --local: each check's limit (default 30)",
    )
    .option(
      "--wait-hint-after <seconds>",
      "say how to start a worker when no worker claimed the run by then",
      "30",
    )
    .action(async (repo: string | undefined, opts: RunOptions) => {
      if (opts.local) return runLocal(env, { ...opts, timeout: opts.timeout ?? "30" });
      const limits = followLimits(opts);
      // Inside a working copy, its repo and branch; elsewhere the repo must be named.
      const copy = repo === undefined ? await copyConfig(env.cwd) : undefined;
      repo ??= copy?.repo;
      if (repo === undefined)
        throw usageError("which repo? not inside a working copy", "quire ci run <org>/<repo>, or --local");
      opts.branch ??= copy?.branch ?? "main";
      const client = await env.client();
      const { run_id } = await client.post("/repos/:repo*/-/ci/run", {
        params: { repo },
        body: { branch: opts.branch },
      });
      if (!opts.follow) {
        if (env.out.json) env.out.writeJson({ run_id });
        else env.out.line(run_id);
        return;
      }
      env.out.note(`queued run ${run_id} of ${repo} ${opts.branch}`);
      await followRun(env, client, repo, run_id, limits);
    });
  ci.command("view <repo> <run>")
    .description("a run's state and its checks (--watch: follow it to its end)")
    .option("-w, --watch", "follow it to its end")
    .option("--timeout <minutes>", "with --watch: stop following after this long")
    .option(
      "--wait-hint-after <seconds>",
      "with --watch: say how to start a worker when none claimed it by then",
      "30",
    )
    .action(
      async (
        repo: string,
        id: string,
        opts: { watch?: boolean; timeout?: string; waitHintAfter: string },
      ) => {
        const client = await env.client();
        if (opts.watch) return followRun(env, client, repo, id, followLimits(opts));
        const job = await client.get("/run/:id", { params: { id } });
        env.out.record(job, [
          { header: "id", value: (j) => j.id },
          { header: "status", value: (j) => j.status, kind: "state" },
          { header: "branch", value: (j) => j.branch },
          { header: "sequence", value: (j) => j.sequence },
          { header: "trigger", value: (j) => j.trigger_type },
          { header: "checks", value: (j) => j.checks },
          { header: "queued", value: (j) => j.queued_at, kind: "time" },
          { header: "completed", value: (j) => j.completed_at, kind: "time" },
          { header: "error", value: (j) => j.error },
        ]);
      },
    );
}
