import { tmpdir } from "node:os";
import { loadDockerCredentials } from "../image/credentials.ts";
import { ImageStore, type PulledImage } from "../image/store.ts";
import { runSandboxedStep, type SandboxSpec } from "../sandbox/bwrap.ts";
import {
  createWorkspace,
  TOKEN_ENV,
  TOKEN_FILE_ENV,
  TOKEN_PATH,
  type Workspace,
} from "../sandbox/workspace.ts";
import { streamLog } from "./live-log.ts";
import { CheckLog } from "./log.ts";
import type { CheckInput, CheckResult, RunCheck, RunnerOptions } from "./types.ts";

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** `30m`, `1m 5s`, `850ms`: durations as a person reads them in a summary or a log. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  if (minutes >= 60) return `${Math.floor(minutes / 60)}h${minutes % 60 ? ` ${minutes % 60}m` : ""}`;
  return seconds ? `${minutes}m ${seconds}s` : `${minutes}m`;
}

/** A multi-line step (a YAML block) in a header: later lines indented under the first. */
function commandForLog(step: string): string {
  return step.trimEnd().replaceAll("\n", "\n    ");
}

/**
 * The steps' environment: the image's own `Env` first (a toolchain image's PATH), then what every
 * check gets, which the image cannot override. Nothing comes from the worker's environment.
 */
function stepEnvironment(image: PulledImage, input: CheckInput): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_PATH };
  for (const entry of image.env) {
    const eq = entry.indexOf("=");
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return {
    ...env,
    HOME: "/tmp",
    CI: "true",
    QUIRE_CHECK: input.check.name,
    [TOKEN_ENV]: input.jobToken,
    [TOKEN_FILE_ENV]: TOKEN_PATH,
  };
}

/**
 * Builds the function that runs one check: pull its image (cached by digest), copy the source
 * into a private workspace, run each step with `sh -c` in a bubblewrap sandbox, one after another,
 * until one fails, the check's time runs out, or it is cancelled. Never throws for a check's own
 * failures (a missing image, a failing step): those are a `failed` result with a log saying why.
 */
export function createCheckRunner(options: RunnerOptions): RunCheck {
  const store = loadDockerCredentials(options.dockerConfigPath).then(
    (credentials) =>
      new ImageStore({
        cacheDir: options.cacheDir,
        insecureRegistries: options.insecureRegistries,
        credentials,
        ...(options.imageLimits ? { limits: options.imageLimits } : {}),
      }),
  );
  store.catch(() => {});
  const pull = (image: string) => store.then((s) => s.pull(image));
  return async (input) => {
    const log = new CheckLog(input.limits.logCapBytes, input.secrets);
    const live = input.liveLog ? streamLog(log, input.liveLog) : undefined;
    try {
      return await runCheck(input, log, pull, options);
    } finally {
      await live?.stop();
    }
  };
}

/** One check, its log written to `log` as it goes. */
async function runCheck(
  input: CheckInput,
  log: CheckLog,
  pull: (image: string) => Promise<PulledImage>,
  options: RunnerOptions,
): Promise<CheckResult> {
  const deadline = performance.now() + input.limits.timeoutMs;
  let image: PulledImage;
  log.line(`==> image ${input.check.image}`);
  try {
    // The pull counts against the check's time, as a step would; a pull another check shares
    // goes on when this one gives up, so the cache still gets the image.
    image = await withinDeadline(pull(input.check.image), input.limits.timeoutMs, input.signal);
    log.line(`    ${image.digest}${image.cached ? " (cached)" : ""}`);
  } catch (error) {
    if (error instanceof Interrupted) return interrupted(error, input, log);
    log.line(`quire: cannot pull the image: ${(error as Error).message}`);
    return {
      conclusion: "failed",
      summary: `image ${input.check.image} could not be pulled`,
      log: log.toBuffer(),
    };
  }
  // Whatever the steps did, they ran in this image: the attestation of the verdict names it.
  return { ...(await runInImage(image, input, log, options, deadline)), imageDigest: image.digest };
}

/** The check's steps in its pulled image, in a fresh workspace. */
async function runInImage(
  image: PulledImage,
  input: CheckInput,
  log: CheckLog,
  options: RunnerOptions,
  deadline: number,
): Promise<CheckResult> {
  let workspace: Workspace;
  try {
    workspace = await createWorkspace({
      sourceDir: input.sourceDir,
      stagingDir: options.stagingDir ?? tmpdir(),
      jobToken: input.jobToken,
      secrets: input.secretFiles,
      network: input.limits.network,
    });
  } catch (error) {
    log.line(`quire: cannot prepare the check's copy of the source: ${(error as Error).message}`);
    return { conclusion: "failed", summary: "the worker could not prepare /src", log: log.toBuffer() };
  }
  try {
    const spec: SandboxSpec = {
      rootfs: image.rootfs,
      workspace,
      network: input.limits.network,
      env: stepEnvironment(image, input),
    };
    return await runSteps(spec, input, log, deadline);
  } finally {
    await workspace.dispose();
  }
}

/** The check ran out of time or was cancelled before its steps started. */
class Interrupted extends Error {
  readonly why: "timeout" | "aborted";
  constructor(why: "timeout" | "aborted") {
    super(why);
    this.why = why;
  }
}

function withinDeadline<T>(work: Promise<T>, ms: number, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Interrupted("timeout")), ms);
    const onAbort = () => reject(new Interrupted("aborted"));
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  });
}

function interrupted(error: Interrupted, input: CheckInput, log: CheckLog): CheckResult {
  const summary =
    error.why === "timeout" ? `timed out after ${formatDuration(input.limits.timeoutMs)}` : "cancelled";
  log.line(`quire: the check ${summary === "cancelled" ? "was cancelled" : summary} while pulling its image`);
  for (const [i, step] of input.check.steps.entries()) {
    log.line(`==> step ${i + 1}/${input.check.steps.length} skipped: ${commandForLog(step)}`);
  }
  return { conclusion: "failed", summary, log: log.toBuffer() };
}

async function runSteps(
  spec: SandboxSpec,
  input: CheckInput,
  log: CheckLog,
  deadline: number,
): Promise<CheckResult> {
  const { steps } = input.check;
  const total = steps.length;
  let failure: string | undefined;
  for (const [i, step] of steps.entries()) {
    const n = i + 1;
    if (failure) {
      log.line(`==> step ${n}/${total} skipped: ${commandForLog(step)}`);
      continue;
    }
    log.line(`==> step ${n}/${total}: ${commandForLog(step)}`);
    const outcome = await runSandboxedStep(spec, step, {
      timeoutMs: deadline - performance.now(),
      signal: input.signal,
      onOutput: (chunk) => log.output(chunk),
    });
    log.endOutput();
    const took = formatDuration(outcome.durationMs);
    if (outcome.killed === "timeout") {
      failure = `timed out after ${formatDuration(input.limits.timeoutMs)}`;
      log.line(`<== step ${n} killed: the check ${failure}`);
    } else if (outcome.killed === "aborted") {
      failure = "cancelled";
      log.line(`<== step ${n} killed: the check was cancelled after ${took}`);
    } else {
      log.line(`<== step ${n} exited ${outcome.exitCode} in ${took}`);
      if (outcome.exitCode !== 0) failure = `step ${n} exited ${outcome.exitCode}`;
    }
  }
  if (failure) return { conclusion: "failed", summary: failure, log: log.toBuffer() };
  return {
    conclusion: "passed",
    summary: `${total} step${total === 1 ? "" : "s"} passed`,
    log: log.toBuffer(),
  };
}
