import type { Command } from "commander";
import type { QuireClient } from "../client/index.ts";
import type { CliEnv } from "../env.ts";
import { CliError, usageError } from "../errors.ts";
import { runLocal } from "./ci-local.ts";
import { CHECK } from "./review.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How often a followed run is polled; QUIRE_POLL_MS overrides (tests). */
const pollMs = (env: CliEnv) => {
  const v = Number(env.env["QUIRE_POLL_MS"]);
  return Number.isFinite(v) && v > 0 ? v : 1000;
};

/**
 * Follows a CI run to its end: prints the job's state as it changes and each check's status as
 * it is reported, then the final table with each check's log link. Exit code 1 when it failed.
 */
async function followRun(env: CliEnv, client: QuireClient, repo: string, id: string): Promise<void> {
  const out = env.out;
  const seen = new Map<string, string>();
  let lastStatus = "";
  for (;;) {
    const job = await client.get("/run/:id", { params: { id } });
    if (job.status !== lastStatus && !out.json) {
      lastStatus = job.status;
      out.note(
        `${out.c.dim(new Date().toLocaleTimeString("en-GB"))} run ${id.slice(0, 8)} ${out.state(job.status)}`,
      );
    }
    const runs = (
      await client.get("/repos/:repo*/-/branch/:branch*/checks", {
        params: { repo, branch: job.branch },
        query: { at: String(job.sequence) },
      })
    ).check_runs.filter((c) => job.checks.includes(c.check_name) && c.sequence === job.sequence);
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
    await sleep(pollMs(env));
  }
}

interface RunOptions {
  branch?: string;
  follow: boolean;
  local?: boolean;
  network: string;
  timeout: string;
}

/** `quire ci run`, `quire ci run --local`, `quire ci view`. */
export function register(program: Command, env: CliEnv): void {
  const ci = program.command("ci").description("continuous integration: manual runs and their results");
  ci.command("run [repo]")
    .description(
      "queue a manual CI run of a branch's head and follow it to its end; --local: run this folder's checks on this machine",
    )
    .option("-b, --branch <branch>", "the branch (default main; with --local, the working copy's)")
    .option("--no-follow", "print the run id and return at once")
    .option("--local", "run the checks of this folder's .svc/ci.yaml here, in the CI worker's sandbox")
    .option("--network <mode>", "with --local: none or on", "none")
    .option("--timeout <minutes>", "with --local: each check's time limit", "30")
    .action(async (repo: string | undefined, opts: RunOptions) => {
      if (opts.local) return runLocal(env, opts);
      if (repo === undefined) throw usageError("which repo?", "quire ci run <org>/<repo>, or --local");
      opts.branch ??= "main";
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
      await followRun(env, client, repo, run_id);
    });
  ci.command("view <repo> <run>")
    .description("a run's state and its checks (--watch: follow it to its end)")
    .option("-w, --watch", "follow it to its end")
    .action(async (repo: string, id: string, opts: { watch?: boolean }) => {
      const client = await env.client();
      if (opts.watch) return followRun(env, client, repo, id);
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
    });
}
