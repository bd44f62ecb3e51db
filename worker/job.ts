import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { ClaimResponse } from "../shared/api/ci.ts";
import { CI_CONFIG_PATH, describeConfigErrors } from "../shared/ci/config/file.ts";
import { parseCiConfig } from "../shared/ci/config/parse.ts";
import type { CiCheck } from "../shared/ci/config/schema.ts";
import { checksToRun } from "../shared/ci/config/triggers.ts";
import type { Logger } from "../shared/log.ts";
import { ApiError, type JobApi, jobApi } from "./api.ts";
import { ArchiveRefused, unpackArchive } from "./archive/unpack.ts";
import type { CheckResult, RunCheck, SecretFile } from "./check/types.ts";
import type { WorkerConfig } from "./config.ts";
import { createOwnedDirectory, type OwnedDirectory } from "./owned-directory.ts";

/**
 * One claimed job, start to end, exactly the spec's workflow (docs/ci-worker.md "How it works"):
 * job JWTs → archive → `.svc/ci.yaml` at the pinned sequence → `if:` → pending → every check at
 * once → logs → final check runs → complete. A heartbeat runs the whole time; when it learns the
 * claim is gone (401: the reaper took the job back), everything stops and nothing more is posted.
 */

export type JobSettings = Pick<
  WorkerConfig,
  | "schedulerUrl"
  | "jobAudience"
  | "network"
  | "checkTimeoutMs"
  | "logCapBytes"
  | "heartbeatIntervalMs"
  | "workDir"
  | "archive"
>;

export interface JobDeps {
  settings: JobSettings;
  runCheck: RunCheck;
  log: Logger;
  /** Aborted when the worker must stop now: the checks are killed and the job left to the reaper. */
  abandon?: AbortSignal;
}

export interface CheckOutcome {
  name: string;
  conclusion: "passed" | "failed";
  summary: string;
}

export interface JobOutcome {
  /** `passed`/`failed`: completed so. `lost`: the claim ended under us. `abandoned`: we stopped. */
  status: "passed" | "failed" | "lost" | "abandoned";
  checks: CheckOutcome[];
  error?: string;
}

/** Longest `error` the scheduler takes at complete. */
const MAX_ERROR = 4096;

export async function runJob(job: ClaimResponse, deps: JobDeps): Promise<JobOutcome> {
  const { settings, log: parentLog } = deps;
  const log = parentLog.child({
    job: job.id,
    repo: job.repo,
    branch: job.branch,
    sequence: job.sequence,
    attempt: job.attempt,
  });
  const api = jobApi(job, settings.schedulerUrl);
  const stop = new AbortController();
  const onAbandon = () => stop.abort(new Error("the worker is stopping"));
  deps.abandon?.addEventListener("abort", onAbandon, { once: true });
  if (deps.abandon?.aborted) onAbandon();
  const heartbeat = startHeartbeat(api, settings.heartbeatIntervalMs, log, stop);
  let workDir: OwnedDirectory | undefined;
  try {
    log.info({ checks: job.checks }, "job claimed");
    const tokens = new Map<string, string>();
    // One JWT per check, so each token's `sub` names its check (an outside system can tell them apart).
    const mint = async (name: string): Promise<string> => {
      const known = tokens.get(name);
      if (known) return known;
      const jwt = await api.exchangeToken(settings.jobAudience, name);
      tokens.set(name, jwt);
      return jwt;
    };
    await Promise.all(job.checks.map(mint));

    // Marked as ours: if the worker is killed outright, the next one removes it.
    workDir = await createOwnedDirectory(path.resolve(settings.workDir), "quire-job-");
    const sourceDir = path.join(workDir.path, "src");
    const source = await prepareSource(api, sourceDir, settings.archive, log);

    const reader = await mint(job.checks[0] ?? "ci");
    const plan = await readChecks(api, reader, job, log);
    const problem = plan.problem ?? source.problem;
    const runs = await Promise.all(
      plan.checks.map(async (check) => ({
        check,
        jwt: await mint(check.name),
        granted: problem ? noSecrets : await fetchSecrets(api, check, log),
      })),
    );
    // Every value any check was given is masked in every check's log, as the tokens are.
    const secrets = [
      job.request_token,
      ...tokens.values(),
      ...runs.flatMap(({ granted }) => granted.files.flatMap((f) => maskedForms(f.value))),
    ];
    throwIfStopped(stop.signal);
    await Promise.all(runs.map(({ check, jwt }) => api.reportCheck(jwt, check.name, "pending")));

    const outcomes = await Promise.all(
      runs.map(async ({ check, jwt, granted }): Promise<CheckOutcome> => {
        const withheld = problem ?? granted.problem;
        const result = withheld
          ? refused(withheld)
          : await runOne(
              deps.runCheck,
              {
                api,
                check,
                sourceDir,
                jwt,
                secrets,
                secretFiles: granted.files,
                settings,
                signal: stop.signal,
              },
              log,
            );
        throwIfStopped(stop.signal);
        const logUrl = await api.uploadLog(check.name, result.log);
        await api.reportCheck(jwt, check.name, result.conclusion, logUrl, result.imageDigest);
        log.info(
          { check: check.name, conclusion: result.conclusion, summary: result.summary },
          "check reported",
        );
        return { name: check.name, conclusion: result.conclusion, summary: result.summary };
      }),
    );
    throwIfStopped(stop.signal);
    const failed = outcomes.filter((o) => o.conclusion === "failed");
    if (failed.length === 0) {
      await api.complete("passed");
      log.info("job passed");
      return { status: "passed", checks: outcomes };
    }
    // One reason shared by every check (the source or the file) is said once.
    const error = (
      problem ??
      `${failed.length} of ${outcomes.length} checks failed: ${failed.map((o) => `${o.name} (${o.summary})`).join("; ")}`
    ).slice(0, MAX_ERROR);
    await api.complete("failed", error);
    log.info({ error }, "job failed");
    return { status: "failed", checks: outcomes, error };
  } catch (err) {
    if (stop.signal.aborted) {
      const lost = heartbeat.lost();
      log.warn(
        { reason: String(stop.signal.reason) },
        lost ? "claim lost; stopped the job" : "job abandoned",
      );
      return { status: lost ? "lost" : "abandoned", checks: [] };
    }
    if (err instanceof ApiError && err.status === 401) {
      log.warn({ err: err.message }, "claim lost; stopped the job");
      stop.abort(err);
      return { status: "lost", checks: [] };
    }
    // Something the job cannot go on without (the API refused or failed): end it with the reason.
    const error = `the worker could not run the job: ${(err as Error).message}`.slice(0, MAX_ERROR);
    log.error({ err }, "job failed in the worker");
    stop.abort(err);
    await api
      .complete("failed", error)
      .catch((e: unknown) => log.warn({ err: e }, "complete failed; the reaper will re-queue"));
    return { status: "failed", checks: [], error };
  } finally {
    heartbeat.stop();
    deps.abandon?.removeEventListener("abort", onAbandon);
    if (workDir) await workDir.remove().catch(() => {});
  }
}

function throwIfStopped(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}

/** Downloads and unpacks the pinned state; a refusal or failure is reported, not thrown. */
async function prepareSource(
  api: JobApi,
  dir: string,
  limits: JobSettings["archive"],
  log: Logger,
): Promise<{ problem?: string }> {
  const url = await api.presignArchive();
  await mkdir(dir, { recursive: true });
  try {
    // The presigned URL carries its own signature: no credentials go with it.
    const res = await fetch(url, { redirect: "error" });
    if (!res.ok || !res.body)
      return { problem: `the source archive could not be downloaded: HTTP ${res.status}` };
    const stats = await unpackArchive(
      Readable.fromWeb(res.body as WebReadableStream<Uint8Array>),
      dir,
      limits,
    );
    log.info(stats, "source unpacked");
    return {};
  } catch (err) {
    if (err instanceof ArchiveRefused) {
      log.warn({ reason: err.message }, "source archive refused");
      return { problem: `The source archive was refused, so no step ran: ${err.message}.` };
    }
    return { problem: `the source archive could not be downloaded: ${(err as Error).message}` };
  }
}

/** The checks to run (file order, `if:` holding for the job's event), or why none can run. */
async function readChecks(
  api: JobApi,
  jwt: string,
  job: ClaimResponse,
  log: Logger,
): Promise<{ checks: PlannedCheck[]; problem?: string }> {
  // What the scheduler queued, should the file not be usable: each gets a failed run saying why.
  const queued = job.checks.map((name) => ({ name, image: "", steps: [], secrets: [] }));
  let text: string;
  try {
    text = (await api.readFile(jwt, CI_CONFIG_PATH)).toString("utf8");
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      return { checks: queued, problem: `${CI_CONFIG_PATH} is missing at sequence ${job.sequence}` };
    throw err;
  }
  const parsed = parseCiConfig(text);
  if (!parsed.ok)
    return {
      checks: queued,
      problem: `${CI_CONFIG_PATH} is invalid:\n${describeConfigErrors(parsed.errors)}`,
    };
  const event = {
    type: job.trigger_type,
    branch: job.trigger_branch,
    base_branch: job.trigger_base_branch ?? "",
    proposal_id: job.trigger_proposal_id ?? "",
  };
  const checks = checksToRun(parsed.config, event);
  const skipped = parsed.config.checks.filter((c) => !checks.includes(c)).map((c) => c.name);
  if (skipped.length > 0) log.info({ skipped }, "checks skipped by their if:");
  return { checks };
}

type PlannedCheck = Pick<CiCheck, "name" | "image" | "steps" | "secrets">;

/** What a check was given of the repo's secrets, or why it cannot run (a refusal, a missing secret). */
interface Granted {
  files: SecretFile[];
  problem?: string;
}

const noSecrets: Granted = { files: [] };

/**
 * The secrets `check` lists, fetched with the job's request token (the server gives each check
 * only what it lists, and only to runs that may have secrets: docs/secrets.md). A check that
 * cannot have every one of them runs no step: it fails with the reason, rather than running
 * steps that expect a file that is not there.
 */
async function fetchSecrets(api: JobApi, check: PlannedCheck, log: Logger): Promise<Granted> {
  if (check.secrets.length === 0) return noSecrets;
  try {
    const { values, missing } = await api.revealSecrets(check.name, check.secrets);
    if (missing.length > 0)
      return {
        files: [],
        problem: `No step ran: the repo has no secret ${missing.join(", ")}, which this check lists under secrets:.`,
      };
    log.info({ check: check.name, secrets: check.secrets }, "secrets fetched");
    return { files: check.secrets.map((name) => ({ name, value: values.get(name) ?? "" })) };
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "SECRETS_BLOCKED") throw err;
    return { files: [], problem: `No step ran: this run may not have the secrets it lists. ${err.message}` };
  }
}

/**
 * The forms of a value a log may show: itself, and without its trailing newline (a file's value
 * printed with `$(cat …)` or `echo`), each line of a multi-line value apart (a key file).
 */
function maskedForms(value: string): string[] {
  const lines = value.split("\n").filter((l) => l.trim().length >= 4);
  return [value, value.replace(/\r?\n$/, ""), ...lines];
}

function refused(problem: string): CheckResult {
  return {
    conclusion: "failed",
    summary: (problem.split("\n")[0] ?? "").slice(0, 200),
    log: Buffer.from(`${problem}\n`),
  };
}

interface OneCheck {
  api: JobApi;
  check: PlannedCheck;
  sourceDir: string;
  jwt: string;
  secrets: string[];
  secretFiles: SecretFile[];
  settings: JobSettings;
  signal: AbortSignal;
}

/** Runs one check; a runner that throws is the check's failure, with the reason in its log. */
async function runOne(runCheck: RunCheck, c: OneCheck, log: Logger): Promise<CheckResult> {
  const { name, image, steps } = c.check;
  try {
    return await runCheck({
      check: { name, image, steps },
      sourceDir: c.sourceDir,
      limits: {
        timeoutMs: c.settings.checkTimeoutMs,
        logCapBytes: c.settings.logCapBytes,
        network: c.settings.network,
      },
      jobToken: c.jwt,
      secrets: c.secrets,
      secretFiles: c.secretFiles,
      signal: c.signal,
      liveLog: { upload: (soFar) => uploadPartialLog(c.api, name, soFar, log) },
    });
  } catch (err) {
    if (c.signal.aborted) throw c.signal.reason;
    log.error({ err, check: name }, "the check runner failed");
    return refused(`the worker could not run the check: ${(err as Error).message}`);
  }
}

/**
 * Uploads a running check's log so far. Best effort: a refusal (the per-minute cap) or a failure
 * only delays what readers see; the next upload, or the whole log at the end, carries the bytes.
 */
async function uploadPartialLog(api: JobApi, checkName: string, soFar: Buffer, log: Logger): Promise<void> {
  try {
    await api.uploadLog(checkName, soFar, true);
    log.debug({ check: checkName, bytes: soFar.length }, "log so far uploaded");
  } catch (err) {
    log.warn(
      { check: checkName, err: (err as Error).message },
      "log so far not uploaded; the next upload carries it",
    );
  }
}

/** Heartbeats every `intervalMs` until stopped; a 401 means the claim is gone and aborts `stop`. */
function startHeartbeat(api: JobApi, intervalMs: number, log: Logger, stop: AbortController) {
  let lost = false;
  let inFlight = false;
  const timer = setInterval(async () => {
    if (inFlight || stop.signal.aborted) return;
    inFlight = true;
    try {
      await api.heartbeat();
      log.debug("heartbeat");
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        lost = true;
        stop.abort(new Error("the claim is gone (the heartbeat was refused)"));
      } else log.warn({ err: (err as Error).message }, "heartbeat failed; trying again at the next beat");
    } finally {
      inFlight = false;
    }
  }, intervalMs);
  return {
    stop: () => clearInterval(timer),
    lost: () => lost,
  };
}
