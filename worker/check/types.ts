import type { ImageLimits } from "../image/layers.ts";

/** One check of `.svc/ci.yaml`, as the worker runs it. */
export interface CheckSpec {
  name: string;
  image: string;
  steps: string[];
}

export interface CheckLimits {
  /** Kills the whole process tree of the check when exceeded. */
  timeoutMs: number;
  /** Bytes of log kept; then one truncation line. */
  logCapBytes: number;
  network: "none" | "on";
}

export interface CheckInput {
  check: CheckSpec;
  /** The unpacked source; the runner gives the check its own writable copy at /src. */
  sourceDir: string;
  limits: CheckLimits;
  /** The check's job JWT, given to its steps as a file and an environment variable. */
  jobToken: string;
  /** Strings that must never appear in the log (the job JWT, the request token, secret values). */
  secrets: string[];
  /** The repo secrets the check lists, mounted read-only at /run/secrets/NAME in every step. */
  secretFiles?: SecretFile[];
  signal?: AbortSignal;
  /** Where the log so far goes while the check runs; without it the log is only the result's. */
  liveLog?: LiveLog;
}

/** The receiver of a running check's log so far (scrubbed and capped as the final log is). */
export interface LiveLog {
  upload(soFar: Buffer): Promise<void>;
}

/** One repo secret as a step sees it: the file /run/secrets/<name>, whose content is `value`. */
export interface SecretFile {
  name: string;
  value: string;
}

export interface CheckResult {
  conclusion: "passed" | "failed";
  /** One line for the check run's summary, e.g. "step 2 exited 1" or "timed out after 30m". */
  summary: string;
  log: Buffer;
  /** The manifest digest of the image the steps ran in (absent when it could not be pulled). */
  imageDigest?: string;
}

export type RunCheck = (input: CheckInput) => Promise<CheckResult>;

export interface RunnerOptions {
  /** Root filesystems cached by image digest live here. */
  cacheDir: string;
  /** `host:port` registries that may be reached over plain HTTP (loopback only). */
  insecureRegistries: string[];
  /** A Docker config file with registry credentials (`auths`), if any. */
  dockerConfigPath?: string;
  /**
   * Where each check's copy of the source is made, under a random name (the worker's work
   * directory); the system's temporary directory when absent. It must be writable.
   */
  stagingDir?: string;
  /** What one image may unpack to (bytes, entries); the defaults of worker/image/layers.ts if absent. */
  imageLimits?: ImageLimits;
}
