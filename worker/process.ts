import path from "node:path";
import { parseArgs } from "node:util";
import { createLogger } from "../shared/log.ts";
import type { RunCheck, RunnerOptions } from "./check/types.ts";
import { loadWorkerConfig } from "./config.ts";
import { describeError, runLoop } from "./loop.ts";
import { removeStaleDirectories } from "./owned-directory.ts";

/**
 * How long past the check timeout a job's or check's directory of another pid namespace (a worker
 * container sharing the work directory, or this one before a restart) may stay: no job of the
 * same configuration lives that long (its checks run side by side).
 */
const STALE_MARGIN_MS = 3_600_000;
/** The same for an unpacking image in `<cacheDir>/tmp/` of another pid namespace. */
const PULL_STALE_AFTER_MS = 25 * 3_600_000;

/**
 * The worker as a process: arguments, configuration, logger, signals, exit code. `makeRunner`
 * builds the check runner from the configuration (worker/main.ts passes the sandboxed one).
 *
 * Signals: the first SIGTERM or SIGINT stops claiming and lets a running job finish for
 * SVC_CI_SHUTDOWN_GRACE; after that, or at a second signal, the checks are killed and the job is
 * left claimed without a heartbeat, so the reaper re-queues it for another worker.
 *
 * Exit codes: 0 after a normal stop (whatever the job's result), 1 when a claim failed with
 * `--once`, 2 for a configuration error.
 */
export async function runWorkerProcess(
  argv: string[],
  makeRunner: (options: RunnerOptions) => RunCheck,
): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { once: { type: "boolean", default: false } },
    strict: true,
  });
  let config: ReturnType<typeof loadWorkerConfig>;
  try {
    config = loadWorkerConfig();
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const log = createLogger(config.log).child({ component: "ci-worker" });
  const drain = new AbortController();
  const abandon = new AbortController();
  let grace: NodeJS.Timeout | undefined;
  const onSignal = (signal: string) => {
    if (drain.signal.aborted) {
      log.warn({ signal }, "second signal: abandoning the running job");
      abandon.abort();
      return;
    }
    log.info(
      { signal, graceMs: config.shutdownGraceMs },
      "stopping: no more claims; a running job may finish",
    );
    drain.abort();
    grace = setTimeout(() => abandon.abort(), config.shutdownGraceMs);
    grace.unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  await removeLeftovers(config.workDir, config.checkTimeoutMs + STALE_MARGIN_MS, log);
  // A pull another check shares outlives the check that started it: a day is safer for the cache.
  await removeLeftovers(path.join(config.cacheDir, "tmp"), PULL_STALE_AFTER_MS, log);
  const runCheck = makeRunner({
    cacheDir: config.cacheDir,
    insecureRegistries: config.insecureRegistries,
    imageLimits: config.image,
    stagingDir: config.workDir,
    ...(config.dockerConfigPath ? { dockerConfigPath: config.dockerConfigPath } : {}),
  });
  log.info(
    {
      scheduler: config.schedulerUrl,
      credential: config.credential.kind,
      once: values.once,
      network: config.network,
    },
    "worker started",
  );
  try {
    const outcomes = await runLoop({
      config,
      runCheck,
      log,
      once: values.once,
      drain: drain.signal,
      abandon: abandon.signal,
    });
    log.info({ jobs: outcomes.map((o) => o.status) }, "worker stopped");
    return 0;
  } catch (err) {
    log.error({ err: describeError(err) }, "worker stopped on an error");
    return 1;
  } finally {
    clearTimeout(grace);
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
}

/**
 * A worker killed outright leaves its job's directory, its checks' copies of the source and the
 * image it was unpacking behind: remove them at start.
 */
async function removeLeftovers(
  directory: string,
  olderThanMs: number,
  log: ReturnType<typeof createLogger>,
): Promise<void> {
  try {
    const removed = await removeStaleDirectories(directory, olderThanMs);
    if (removed.length > 0) log.info({ directory, removed }, "removed the directories a stopped worker left");
  } catch (err) {
    // Only disk space is at stake: the worker still runs.
    log.warn(
      { err: describeError(err), directory },
      "could not remove the directories a stopped worker left",
    );
  }
}
