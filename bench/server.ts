import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../test/support/ports.ts";
import { progress } from "./log.ts";

/** The identity every request runs as (DEV_IDENTITY): it creates the orgs and repos, so it has every role. */
export const BENCH_IDENTITY = "bench@quire.test";

/** A Quire server running as a child process with its own embedded PostgreSQL in a temp dir. */
export interface QuireProcess {
  url: string;
  /** The embedded server's `quire` database, for the pg baseline on the same PostgreSQL. */
  databaseUrl: string;
  pid: number;
  /** Current and peak (VmHWM) resident memory of the server process, in KiB. */
  memory(): Promise<{ rssKiB: number; peakKiB: number }>;
  /** Stops the server and its PostgreSQL and deletes the temp dir; safe to call more than once. */
  stop(): Promise<void>;
}

const REPO_ROOT = path.resolve(import.meta.dirname, "..");
const STARTUP_TIMEOUT_MS = 180_000;

/** Starts Quire exactly as `npm start` does, and resolves once /healthz answers. */
export async function startQuire(): Promise<QuireProcess> {
  const dir = await mkdtemp(path.join(tmpdir(), "quire-bench-"));
  await chmod(dir, 0o755); // as root, embedded PostgreSQL runs as `postgres` and must reach its data dir
  const [port, pgPort] = [await freePort(), await freePort()];
  // `node --import tsx` rather than the tsx CLI: the CLI runs the script in a second process, and
  // the memory figures must come from the process that serves the requests.
  const child = spawn(process.execPath, ["--import", "tsx", "functions/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: "", // empty means unset: Quire starts its own embedded PostgreSQL
      PORT: String(port),
      DEV_IDENTITY: BENCH_IDENTITY,
      LOG_LEVEL: "warn",
      SVC_DATA_DIR: dir,
      SVC_EMBEDDED_PG_PORT: String(pgPort),
      SVC_BLOB_LOCAL_DIR: path.join(dir, "blobs"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  forwardOutput(child);
  const server: QuireProcess = {
    url: `http://127.0.0.1:${port}`,
    databaseUrl: `postgres://postgres:postgres@127.0.0.1:${pgPort}/quire`,
    pid: child.pid!,
    memory: () => memoryOf(child.pid!),
    stop: onlyOnce(() => stopAll(child, dir)),
  };
  try {
    await waitHealthy(server.url, child);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

/** The server's log lines (warnings and errors at LOG_LEVEL=warn) on our stderr, marked as its own. */
function forwardOutput(child: ChildProcess): void {
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8");
    stream?.on("data", (text: string) => {
      for (const line of text.split("\n")) if (line.trim()) process.stderr.write(`[quire] ${line}\n`);
    });
  }
}

async function waitHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`quire exited during startup (code ${child.exitCode}, signal ${child.signalCode})`);
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
    } catch {
      // not listening yet: initdb and migrations run before the port opens
    }
    await sleep(250);
  }
  throw new Error(`quire did not answer /healthz within ${STARTUP_TIMEOUT_MS / 1000} s`);
}

async function memoryOf(pid: number): Promise<{ rssKiB: number; peakKiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssKiB: kib("VmRSS"), peakKiB: kib("VmHWM") };
}

function onlyOnce(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= fn();
    return running;
  };
}

/**
 * SIGTERM lets Quire close its pool and stop its PostgreSQL. If it does not exit in time it is
 * killed, and then its PostgreSQL (found through postmaster.pid) would be left running: stop that
 * one by its pid too, before deleting the data under it.
 */
async function stopAll(child: ChildProcess, dir: string): Promise<void> {
  progress("stopping quire");
  if (
    !(await stopProcess(
      child.pid,
      "SIGTERM",
      30_000,
      () => child.exitCode !== null || child.signalCode !== null,
    ))
  )
    await stopProcess(
      child.pid,
      "SIGKILL",
      5_000,
      () => child.exitCode !== null || child.signalCode !== null,
    );
  const postmaster = await postmasterPid(dir);
  if (postmaster !== undefined && alive(postmaster)) {
    progress(`stopping leftover postgres ${postmaster}`);
    if (!(await stopProcess(postmaster, "SIGINT", 30_000, () => !alive(postmaster))))
      await stopProcess(postmaster, "SIGKILL", 5_000, () => !alive(postmaster));
  }
  await rm(dir, { recursive: true, force: true });
}

/** Sends `signal` to `pid` and waits up to `timeoutMs` for `gone()`; true when it went. */
async function stopProcess(
  pid: number | undefined,
  signal: NodeJS.Signals,
  timeoutMs: number,
  gone: () => boolean,
): Promise<boolean> {
  if (pid === undefined || gone()) return true;
  try {
    process.kill(pid, signal);
  } catch {
    return true; // already gone
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone()) return true;
    await sleep(100);
  }
  return gone();
}

async function postmasterPid(dir: string): Promise<number | undefined> {
  try {
    const text = await readFile(path.join(dir, "postgres", "postmaster.pid"), "utf8");
    const pid = Number(text.split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
