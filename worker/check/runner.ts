import { loadDockerCredentials } from "../image/credentials.ts";
import { ImageStore, type PulledImage } from "../image/store.ts";
import { runSandboxedStep, type SandboxSpec } from "../sandbox/bwrap.ts";
import { createWorkspace, TOKEN_ENV, TOKEN_FILE_ENV, TOKEN_PATH } from "../sandbox/workspace.ts";
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
      }),
  );
  store.catch(() => {});
  return async (input) => {
    const log = new CheckLog(input.limits.logCapBytes, input.secrets);
    const deadline = performance.now() + input.limits.timeoutMs;
    let image: PulledImage;
    try {
      log.line(`==> image ${input.check.image}`);
      image = await (await store).pull(input.check.image);
      log.line(`    ${image.digest}${image.cached ? " (cached)" : ""}`);
    } catch (error) {
      log.line(`quire: cannot pull the image: ${(error as Error).message}`);
      return {
        conclusion: "failed",
        summary: `image ${input.check.image} could not be pulled`,
        log: log.toBuffer(),
      };
    }
    const workspace = await createWorkspace({
      sourceDir: input.sourceDir,
      jobToken: input.jobToken,
      network: input.limits.network,
    });
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
  };
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
      log.line(`==> step ${n}/${total} skipped: ${step}`);
      continue;
    }
    log.line(`==> step ${n}/${total}: ${step}`);
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
