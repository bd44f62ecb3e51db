import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { build } from "esbuild";
import { buildLocal } from "../scripts/build-local.ts";
import { freePort } from "../test/support/ports.ts";
import { progress } from "./log.ts";

/** The identity every request runs as (DEV_IDENTITY): it creates the orgs and repos, so it has every role. */
export const BENCH_IDENTITY = "bench@quire.test";

/**
 * A Quire server running as a child process with its own temp dir: either with its own embedded
 * PostgreSQL there, or (`startQuire({ sharing })`) as a second instance on another one's database.
 */
export interface QuireProcess {
  url: string;
  /** The embedded server's `quire` database, for the pg baseline on the same PostgreSQL. */
  databaseUrl: string;
  /** Where the server keeps large file bodies (SVC_BLOB_LOCAL_DIR); a second instance shares it. */
  blobDir: string;
  pid: number;
  /** SVC_CI_WORKER_TOKEN, the bearer of `POST /claim`: set when started with `ci: true`. */
  workerToken?: string;
  /**
   * With `loopProbe`: the longest event-loop delay in the server process since the previous call
   * (so one call before a phase resets it). Without: undefined.
   */
  loopDelay(): Promise<LoopDelay | undefined>;
  /** Current and peak (VmHWM) resident memory of the server process, in KiB. */
  memory(): Promise<{ rssKiB: number; peakKiB: number }>;
  /** Resets VmHWM to the current RSS (Linux clear_refs "5"); false where the kernel does not allow it. */
  resetPeak(): Promise<boolean>;
  /** Stops the server and its PostgreSQL and deletes the temp dir; safe to call more than once. */
  stop(): Promise<void>;
}

/** The server's event-loop delay over a stretch of time, from bench/loop-probe.ts. */
export interface LoopDelay {
  /** The longest the event loop was held, ms. */
  maxMs: number;
  p99Ms: number;
}

const REPO_ROOT = path.resolve(import.meta.dirname, "..");
const STARTUP_TIMEOUT_MS = 180_000;

/** Every server started and not yet stopped, oldest first, so that any exit path can stop them. */
const running: QuireProcess[] = [];

/**
 * Stops every server still running, newest first: a second instance before the one whose
 * PostgreSQL it uses. For the exit paths outside a try/finally (signals, a crash).
 */
export async function stopEveryQuire(): Promise<void> {
  for (const server of [...running].reverse()) await server.stop();
}

export interface QuireOptions {
  /**
   * Run as a second instance of `sharing`: on its database (DATABASE_URL, no embedded PostgreSQL
   * of its own) and its blob dir. Stop it before `sharing`.
   */
  sharing?: QuireProcess;
  /** Marks its log lines on stderr: `[quire]` by default. */
  name?: string;
  /**
   * Run the CI scheduler as `npm start` does with CI on: RUNNER_URL is the server's own URL (so it
   * registers its global subscription at start, and commits reach its `/webhook` through signed
   * deliveries) and a random SVC_CI_WORKER_TOKEN (`workerToken`) lets the bench claim jobs.
   */
  ci?: boolean;
  /** Load bench/loop-probe.ts into the server, so that `loopDelay()` reports its event-loop pauses. */
  loopProbe?: boolean;
  /** Another checkout of Quire to run instead of this one (an A/B against older code). */
  root?: string;
}

/**
 * Starts Quire exactly as `npm start` does, and resolves once /healthz answers. Every server runs
 * with SVC_WEBHOOK_ALLOW_PRIVATE=true: the bench's webhook receiver is on 127.0.0.1, and the
 * server is the bench's own (DEV_IDENTITY, no tokens), never reachable from outside.
 */
export async function startQuire(opts: QuireOptions = {}): Promise<QuireProcess> {
  const name = opts.name ?? "quire";
  const dir = await mkdtemp(path.join(tmpdir(), "quire-bench-"));
  await chmod(dir, 0o755); // as root, embedded PostgreSQL runs as `postgres` and must reach its data dir
  const [port, pgPort] = [await freePort(), await freePort()];
  const blobDir = opts.sharing?.blobDir ?? path.join(dir, "blobs");
  const databaseUrl = opts.sharing?.databaseUrl ?? `postgres://postgres:postgres@127.0.0.1:${pgPort}/quire`;
  const url = `http://127.0.0.1:${port}`;
  const workerToken = opts.ci ? randomBytes(24).toString("base64url") : undefined;
  // The port is chosen before the start, so RUNNER_URL can name it.
  // A second instance shares the token (so it does not warn that claims are refused) but gets no
  // RUNNER_URL: it would re-point the scheduler's one subscription at itself.
  const sharedToken = opts.sharing?.workerToken;
  const ci = workerToken
    ? { RUNNER_URL: url, SVC_CI_WORKER_TOKEN: workerToken }
    : sharedToken
      ? { SVC_CI_WORKER_TOKEN: sharedToken }
      : {};
  // The probe is bundled: a .ts file would make Node load its type stripper into the process
  // whose memory is measured.
  const command = await serverCommand(opts.root, dir);
  const probeFile = opts.loopProbe ? path.join(dir, "loop-delay.json") : undefined;
  const probe = probeFile ? ["--import", await bundledProbe(dir)] : [];
  const [flags, entry] = [command.args.slice(0, -1), command.args.slice(-1)];
  const child = spawn(process.execPath, [...flags, ...probe, ...entry], {
    cwd: opts.root ?? REPO_ROOT,
    env: {
      ...process.env,
      ...command.env,
      // empty means unset: Quire starts its own embedded PostgreSQL
      DATABASE_URL: opts.sharing ? databaseUrl : "",
      PORT: String(port),
      DEV_IDENTITY: BENCH_IDENTITY,
      LOG_LEVEL: "warn",
      SVC_DATA_DIR: dir,
      SVC_EMBEDDED_PG_PORT: String(pgPort),
      SVC_BLOB_LOCAL_DIR: blobDir,
      SVC_WEBHOOK_ALLOW_PRIVATE: "true",
      SVC_CI_LOG_DIR: path.join(dir, "ci-logs"),
      ...ci,
      ...(probeFile ? { QUIRE_LOOP_PROBE_FILE: probeFile } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  forwardOutput(child, name);
  const stop = onlyOnce(async () => {
    try {
      await stopAll(child, dir, name);
    } finally {
      const k = running.indexOf(server);
      if (k >= 0) running.splice(k, 1);
    }
  });
  const { pid } = child;
  if (pid === undefined) throw new Error(`${name}: node did not start (its process has no pid)`);
  const server: QuireProcess = {
    url,
    databaseUrl,
    blobDir,
    pid,
    ...(workerToken ? { workerToken } : {}),
    loopDelay: async () => (probeFile ? readLoopDelay(pid, probeFile) : undefined),
    memory: () => memoryOf(pid),
    resetPeak: () => resetPeakOf(pid),
    stop,
  };
  running.push(server); // before waiting: a Ctrl-C during startup must stop it too
  try {
    await waitHealthy(server.url, child);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

/** How `npm start` runs Node: the environment it sets and Node's flags, then the entry file. */
interface ServerCommand {
  env: Record<string, string>;
  args: string[];
}

/**
 * As `npm start` runs it: the local bundle on plain Node with the start script's environment and
 * flags, built into this server's own folder. Another checkout (an A/B against other code) is
 * built and started the same way with its own build script and start script, so the two differ
 * only in their code; one that predates the local bundle runs from its sources.
 */
async function serverCommand(root: string | undefined, dir: string): Promise<ServerCommand> {
  const out = path.join(dir, "build");
  if (!root) {
    const { env, flags } = await startSettings();
    return { env, args: [...flags, await buildLocal(out)] };
  }
  const builder = path.join(root, "scripts/build-local.ts");
  if (!existsSync(builder)) return { env: {}, args: ["--import", "tsx", "functions/main.ts"] };
  const theirs = (await import(builder)) as { buildLocal: typeof buildLocal };
  const { env, flags } = await startSettings(root);
  return { env, args: [...flags, await theirs.buildLocal(out)] };
}

/**
 * The environment and Node flags of `npm start` (package.json:
 * `[env NAME=value ...] node <flags> dist/local/main.js`).
 */
export async function startSettings(
  root: string = REPO_ROOT,
): Promise<{ env: Record<string, string>; flags: string[] }> {
  const manifest = JSON.parse(await readFile(path.join(root, "package.json"), "utf8"));
  const start = /(?:\benv ((?:\w+=\S+ )*))?\bnode ((?:--\S+ )*)dist\/local\/main\.js/.exec(
    String(manifest.scripts.start),
  );
  if (!start) throw new Error("package.json's start script no longer runs `node [flags] dist/local/main.js`");
  const words = (text: string | undefined) => (text ?? "").trim().split(" ").filter(Boolean);
  const env = Object.fromEntries(
    words(start[1]).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
  );
  return { env, flags: words(start[2]) };
}

/** bench/loop-probe.ts as one JavaScript file in `dir`. */
async function bundledProbe(dir: string): Promise<string> {
  const outfile = path.join(dir, "loop-probe.mjs");
  await build({
    entryPoints: [path.join(REPO_ROOT, "bench/loop-probe.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    logLevel: "warning",
  });
  return outfile;
}

/** The server's log lines (warnings and errors at LOG_LEVEL=warn) on our stderr, marked as its own. */
function forwardOutput(child: ChildProcess, name: string): void {
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8");
    stream?.on("data", (text: string) => {
      for (const line of text.split("\n")) if (line.trim()) process.stderr.write(`[${name}] ${line}\n`);
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

/** Asks the probe in `pid` for its figures (SIGUSR2) and waits for it to write them. */
async function readLoopDelay(pid: number, file: string): Promise<LoopDelay> {
  const seqOf = async () => {
    try {
      return JSON.parse(await readFile(file, "utf8")) as LoopDelay & { seq: number };
    } catch {
      return undefined; // not written yet
    }
  };
  const before = (await seqOf())?.seq ?? 0;
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const now = await seqOf();
    if (now && now.seq > before) return { maxMs: now.maxMs, p99Ms: now.p99Ms };
    await sleep(20);
  }
  throw new Error("the server's loop probe did not answer within 30 s");
}

async function memoryOf(pid: number): Promise<{ rssKiB: number; peakKiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssKiB: kib("VmRSS"), peakKiB: kib("VmHWM") };
}

async function resetPeakOf(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
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
async function stopAll(child: ChildProcess, dir: string, name: string): Promise<void> {
  progress(`stopping ${name}`);
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
