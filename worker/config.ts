import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { isLoopbackHost, secureUrlSetting } from "../shared/config.ts";
import type { ImageLimits } from "./image/layers.ts";
import { imageLimitSettings, integerSetting } from "./image/limits-env.ts";

/**
 * The worker's settings, all from the environment (docs/ci-worker.md has the table). Validated
 * once at start: a wrong value stops the worker with every problem listed, never a job.
 */

/** Where the CronJob's pods get their projected service-account token (worker/deploy/cronjob.yaml). */
export const DEFAULT_TOKEN_FILE = "/var/run/secrets/quire/token";

const MIB = 1024 * 1024;

const text = z
  .string()
  .trim()
  .transform((v) => (v === "" ? undefined : v))
  .optional();

/** `90`, `90s`, `500ms`, `30m`, `1h` → milliseconds; a bare number is seconds. */
export function parseDuration(raw: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? "s"] ?? 1000;
  return Math.round(Number(m[1]) * unit);
}

const duration = (fallback: string, minMs: number, maxMs: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const raw = v === undefined || v.trim() === "" ? fallback : v;
      const ms = parseDuration(raw);
      if (ms === undefined) {
        ctx.addIssue({ code: "custom", message: `must be a duration like 90s, 30m or 1h, got "${raw}"` });
        return z.NEVER;
      }
      if (ms < minMs || ms > maxMs) {
        ctx.addIssue({ code: "custom", message: `must be between ${minMs} ms and ${maxMs} ms, got ${raw}` });
        return z.NEVER;
      }
      return ms;
    });

/** The scheduler gets the worker's credential: https, or http on this machine only. */
const schedulerUrl = secureUrlSetting("http://127.0.0.1:8080");

/** Plain-HTTP registries: `host:port` on a loopback address, so images never travel unverified over a network. */
const insecureRegistries = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const list = (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    for (const entry of list) {
      const m = /^(\[[^\]]+\]|[^:/\s]+):(\d{1,5})$/.exec(entry);
      if (!m || !isLoopbackHost(m[1] ?? "")) {
        ctx.addIssue({ code: "custom", message: `"${entry}" must be host:port on a loopback address` });
        return z.NEVER;
      }
    }
    return list;
  });

const workerEnvSchema = z.object({
  SVC_CI_SCHEDULER_URL: schedulerUrl,
  SVC_CI_WORKER_TOKEN: text.refine((v) => v === undefined || v.length >= 16, {
    message: "must be at least 16 characters",
  }),
  SVC_CI_WORKER_TOKEN_FILE: z.string().trim().min(1).default(DEFAULT_TOKEN_FILE),
  SVC_CI_JOB_AUDIENCE: z.string().trim().min(1).default("quire"),
  SVC_CI_INSECURE_REGISTRIES: insecureRegistries,
  SVC_CI_DOCKER_CONFIG: text,
  SVC_CI_CHECK_NETWORK: z.enum(["none", "on"], "must be none or on").default("none"),
  SVC_CI_CHECK_TIMEOUT: duration("30m", 1000, 24 * 3_600_000),
  SVC_CI_LOG_CAP_BYTES: integerSetting(10 * MIB, 1024, 512 * MIB),
  SVC_CI_POLL_INTERVAL: duration("10s", 10, 3_600_000),
  SVC_CI_HEARTBEAT_INTERVAL: duration("30s", 10, 60_000),
  SVC_CI_SHUTDOWN_GRACE: duration("20s", 0, 3_600_000),
  SVC_CI_CACHE_DIR: z
    .string()
    .trim()
    .min(1)
    .default(path.join(homedir(), ".cache", "quire-worker")),
  SVC_CI_WORK_DIR: z.string().trim().min(1).default(tmpdir()),
  SVC_CI_ARCHIVE_MAX_BYTES: integerSetting(2048 * MIB, 1, Number.MAX_SAFE_INTEGER),
  SVC_CI_ARCHIVE_MAX_FILES: integerSetting(200_000, 1, 10_000_000),
  ...imageLimitSettings,
  LOG_FORMAT: z.enum(["json", "text"]).default("json"),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
});

/** What the worker runs with: the environment, parsed. */
export interface WorkerConfig {
  schedulerUrl: string;
  /** The static token (local runs), or else the file of the projected token, re-read per claim. */
  credential: { kind: "static"; token: string } | { kind: "file"; path: string };
  jobAudience: string;
  insecureRegistries: string[];
  dockerConfigPath: string | undefined;
  network: "none" | "on";
  checkTimeoutMs: number;
  logCapBytes: number;
  pollIntervalMs: number;
  heartbeatIntervalMs: number;
  shutdownGraceMs: number;
  cacheDir: string;
  workDir: string;
  archive: { maxBytes: number; maxFiles: number };
  image: ImageLimits;
  log: { format: "json" | "text"; level: string };
}

/** Parses the environment; throws one error listing every bad variable. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const known = Object.fromEntries(Object.keys(workerEnvSchema.shape).map((k) => [k, env[k]] as const));
  const parsed = workerEnvSchema.safeParse(known);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`the worker's configuration is invalid:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  return {
    schedulerUrl: e.SVC_CI_SCHEDULER_URL,
    credential: e.SVC_CI_WORKER_TOKEN
      ? { kind: "static", token: e.SVC_CI_WORKER_TOKEN }
      : { kind: "file", path: e.SVC_CI_WORKER_TOKEN_FILE },
    jobAudience: e.SVC_CI_JOB_AUDIENCE,
    insecureRegistries: e.SVC_CI_INSECURE_REGISTRIES,
    dockerConfigPath: e.SVC_CI_DOCKER_CONFIG,
    network: e.SVC_CI_CHECK_NETWORK,
    checkTimeoutMs: e.SVC_CI_CHECK_TIMEOUT,
    logCapBytes: e.SVC_CI_LOG_CAP_BYTES,
    pollIntervalMs: e.SVC_CI_POLL_INTERVAL,
    heartbeatIntervalMs: e.SVC_CI_HEARTBEAT_INTERVAL,
    shutdownGraceMs: e.SVC_CI_SHUTDOWN_GRACE,
    cacheDir: e.SVC_CI_CACHE_DIR,
    workDir: e.SVC_CI_WORK_DIR,
    archive: { maxBytes: e.SVC_CI_ARCHIVE_MAX_BYTES, maxFiles: e.SVC_CI_ARCHIVE_MAX_FILES },
    image: { maxBytes: e.SVC_CI_IMAGE_MAX_BYTES, maxEntries: e.SVC_CI_IMAGE_MAX_ENTRIES },
    log: { format: e.LOG_FORMAT, level: e.LOG_LEVEL },
  };
}
