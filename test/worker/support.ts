import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { createLogger, type Logger } from "../../shared/log.ts";
import type { RunCheck } from "../../worker/check/types.ts";
import type { WorkerConfig } from "../../worker/config.ts";
import { DEFAULT_IMAGE_LIMITS } from "../../worker/image/layers.ts";
import type { JobOutcome } from "../../worker/job.ts";
import { runLoop } from "../../worker/loop.ts";
import { type CiApp, startCiApp, WORKER_TOKEN, waitForCount } from "../ci/support.ts";
import type { TestApp } from "../support/app.ts";
import { stdioWith } from "../support/child.ts";

/**
 * A CI test app behind a small HTTP relay: SVC_PUBLIC_URL (the claim's `api_url` and the host of
 * presigned archive URLs) is the relay, which passes every request through to the app unchanged,
 * except that, while `swap` holds bytes, it answers archive downloads with them. That is how a
 * hostile archive reaches a real worker over the real protocol: everything else is the server's.
 */
export interface WorkerApp extends CiApp {
  /** Bytes served instead of the next archive downloads; null: the server's own archive. */
  swap: Buffer | null;
  /** How many archive downloads the relay answered from `swap`. */
  swapped: number;
  /** Every bearer token that went through the relay (request tokens, job JWTs, the worker's). */
  bearers: Set<string>;
  /** The relay's URL (SVC_PUBLIC_URL; a worker may use it as its scheduler URL too). */
  relayUrl: string;
}

export async function startWorkerApp(env: Record<string, string> = {}): Promise<WorkerApp> {
  let target = "";
  const state = { swap: null as Buffer | null, swapped: 0 };
  const bearers = new Set<string>();
  const relay: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://relay");
    const auth = /^Bearer (.+)$/i.exec(req.headers.authorization ?? "");
    if (auth?.[1]) bearers.add(auth[1]);
    if (state.swap && req.method === "GET" && url.pathname.endsWith("/-/archive")) {
      state.swapped += 1;
      res.writeHead(200, { "content-type": "application/gzip" }).end(state.swap);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === "string" && k !== "host" && k !== "connection") headers.set(k, v);
    const method = req.method ?? "GET";
    const upstream = await fetch(`${target}${req.url}`, {
      method,
      headers,
      body: method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks),
      redirect: "manual",
    });
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (k !== "content-encoding" && k !== "content-length" && k !== "transfer-encoding") out[k] = v;
    });
    res.writeHead(upstream.status, out).end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const address = relay.address();
  const relayUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const app = await startCiApp({ SVC_PUBLIC_URL: relayUrl, ...env });
  target = app.url;
  const close = app.close;
  // Accessors (not copies) so the tests' assignments reach the relay.
  return Object.defineProperties(app, {
    swap: { get: () => state.swap, set: (v: Buffer | null) => (state.swap = v) },
    swapped: { get: () => state.swapped },
    bearers: { value: bearers },
    relayUrl: { value: relayUrl },
    close: {
      value: async () => {
        relay.closeAllConnections();
        await new Promise<void>((resolve) => relay.close(() => resolve()));
        await close();
      },
    },
  }) as WorkerApp;
}

/** A worker configuration for the app: static token, quick heartbeats, small limits. */
export function workerConfig(app: TestApp, overrides: Partial<WorkerConfig> = {}): WorkerConfig {
  return {
    schedulerUrl: app.url,
    credential: { kind: "static", token: WORKER_TOKEN },
    jobAudience: "quire",
    insecureRegistries: [],
    dockerConfigPath: undefined,
    network: "none",
    checkTimeoutMs: 30_000,
    logCapBytes: 1024 * 1024,
    pollIntervalMs: 25,
    heartbeatIntervalMs: 50,
    shutdownGraceMs: 1000,
    cacheDir: path.join(tmpdir(), "quire-worker-test-cache"),
    workDir: tmpdir(),
    archive: { maxBytes: 64 * 1024 * 1024, maxFiles: 10_000 },
    image: DEFAULT_IMAGE_LIMITS,
    log: { format: "json", level: "error" },
    ...overrides,
  };
}

/** The worker's log, silent unless QUIRE_TEST_LOGS=1. */
export function workerLog(): Logger {
  const out =
    process.env["QUIRE_TEST_LOGS"] === "1"
      ? process.stdout
      : new Writable({ write: (_chunk, _enc, done) => done() });
  return createLogger(
    { format: "text", level: process.env["QUIRE_TEST_LOGS"] === "1" ? "debug" : "error" },
    out,
  );
}

/**
 * Runs the worker in this process, one claim at a time, until it has run one job (deliveries are
 * asynchronous, so the first claims may find nothing), or fails after `ms`.
 */
export async function workOneJob(
  config: WorkerConfig,
  runCheck: RunCheck,
  opts: { ms?: number; abandon?: AbortSignal } = {},
): Promise<JobOutcome> {
  const until = Date.now() + (opts.ms ?? 10_000);
  const never = new AbortController().signal;
  for (;;) {
    const [outcome] = await runLoop({
      config,
      runCheck,
      log: workerLog(),
      once: true,
      drain: never,
      abandon: opts.abandon ?? never,
    });
    if (outcome) return outcome;
    expect(Date.now(), "a job to claim").toBeLessThan(until);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The check runs of `branch` at `sequence`, by name: status, log URL, reporter. */
export async function checkRunsAt(app: TestApp, repo: string, branch: string, sequence: number) {
  const rows = await app.sql<{
    check_name: string;
    status: string;
    log_url: string | null;
    reporter: string;
  }>(
    `SELECT c.check_name, c.status, c.log_url, c.reporter FROM check_runs c
     JOIN branches b ON b.id = c.branch_id JOIN repos r ON r.id = c.repo_id
     WHERE r.name = $1 AND b.name = $2 AND c.sequence = $3 ORDER BY c.check_name`,
    [repo, branch, sequence],
  );
  return Object.fromEntries(rows.map((r) => [r.check_name, r]));
}

/** The log of a check, as a reader gets it through the log proxy (302 to a signed URL). */
export async function readLog(app: TestApp, reader: string, logUrl: string): Promise<string> {
  const token = await app.idp.token(reader);
  const redirect = await fetch(logUrl, { headers: { authorization: `Bearer ${token}` }, redirect: "manual" });
  expect(redirect.status, `log proxy for ${logUrl}`).toBe(302);
  const served = await fetch(redirect.headers.get("location") ?? "");
  expect(served.status).toBe(200);
  return served.text();
}

/** A worker started as its own process (`node --import tsx worker/main.ts`), its output kept. */
export interface WorkerProcess {
  child: ChildProcess;
  /** stdout and stderr so far (the worker's text log). */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Starts `worker/main.ts --once` exactly as `npm run worker -- --once` runs it, in one process
 * (not through the tsx CLI, which would put a second process in between: a SIGKILL must reach the
 * worker itself). `env` is its whole configuration, on top of PATH and HOME; `inherit` puts open
 * descriptors at the given numbers in the worker (`{40: fd}`), as a shell's `40<file` would.
 */
export function spawnWorker(
  env: Record<string, string>,
  opts: { inherit?: Record<number, number> } = {},
): WorkerProcess {
  let out = "";
  const child = spawn(process.execPath, ["--import", "tsx", "worker/main.ts", "--once"], {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: process.env["HOME"] ?? "/root",
      LOG_FORMAT: "text",
      LOG_LEVEL: "debug",
      ...env,
    },
    stdio: stdioWith(opts.inherit),
  });
  const keep = (chunk: Buffer) => {
    out += chunk.toString();
    if (process.env["QUIRE_TEST_LOGS"] === "1") process.stdout.write(chunk);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** Waits until the push job of `sequence` of `repo` is queued (deliveries are asynchronous); its id. */
export async function queuedJob(app: TestApp, repo: string, sequence: number): Promise<string> {
  const sql = `SELECT count(*)::int AS n FROM ci_jobs j JOIN repos r ON r.id = j.repo_id
               WHERE r.name = $1 AND j.sequence = $2 AND j.status = 'queued'`;
  await waitForCount(app, sql, [repo, sequence], 1);
  const [row] = await app.sql<{ id: string }>(
    "SELECT j.id::text FROM ci_jobs j JOIN repos r ON r.id = j.repo_id WHERE r.name = $1 AND j.sequence = $2",
    [repo, sequence],
  );
  return row?.id ?? "";
}
