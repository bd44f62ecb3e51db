import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../shared/log.ts";
import { ApiError, claim } from "./api.ts";
import type { RunCheck } from "./check/types.ts";
import type { WorkerConfig } from "./config.ts";
import { type JobOutcome, runJob } from "./job.ts";

/**
 * The worker's loop: claim, run the job, claim again; when nothing is queued, wait the poll
 * interval with jitter (so a fleet started together does not poll in step). `once`: one claim,
 * then return — what each CronJob pod does.
 */

export interface LoopOptions {
  config: WorkerConfig;
  runCheck: RunCheck;
  log: Logger;
  once: boolean;
  /** Aborted at the first SIGTERM: claim nothing more, let a running job finish. */
  drain: AbortSignal;
  /** Aborted when the grace time is over (or a second signal came): stop the running job now. */
  abandon: AbortSignal;
}

/** The credential for one claim: the static token, or the projected token read afresh (kubelet rotates it). */
export async function workerCredential(credential: WorkerConfig["credential"]): Promise<string> {
  if (credential.kind === "static") return credential.token;
  try {
    return (await readFile(credential.path, "utf8")).trim();
  } catch (err) {
    throw new Error(`cannot read the worker token file ${credential.path}: ${(err as Error).message}`);
  }
}

/** Uniformly between half and one and a half times `ms`. */
export function withJitter(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (0.5 + random()));
}

/** Runs until drained (or, with `once`, after one claim). Returns the outcomes of the jobs run. */
export async function runLoop(opts: LoopOptions): Promise<JobOutcome[]> {
  const { config, log, once, drain } = opts;
  const outcomes: JobOutcome[] = [];
  while (!drain.aborted) {
    let job: Awaited<ReturnType<typeof claim>>;
    try {
      job = await claim(config.schedulerUrl, await workerCredential(config.credential));
    } catch (err) {
      // 503: the scheduler could not check our identity now; anything else is logged the same way.
      const refused = err instanceof ApiError && err.status === 401;
      log[refused ? "error" : "warn"](
        { err: describeError(err) },
        refused ? "claim refused" : "claim failed",
      );
      if (once) throw err;
      await pause(withJitter(config.pollIntervalMs), drain);
      continue;
    }
    if (job) {
      outcomes.push(
        await runJob(job, {
          settings: config,
          runCheck: opts.runCheck,
          log,
          abandon: opts.abandon,
        }),
      );
      if (once) break;
      continue;
    }
    log.debug("nothing queued");
    if (once) break;
    await pause(withJitter(config.pollIntervalMs), drain);
  }
  return outcomes;
}

/** An error's message with its cause's (fetch says only "fetch failed"; the cause says why). */
export function describeError(err: unknown): string {
  const e = err as Error & { cause?: unknown };
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : "";
  return `${e.message}${cause}`;
}

/** Sleeps `ms`, or less when `signal` is aborted. */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => {});
}
