import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { AnyRoute } from "../shared/http/route.ts";

/**
 * Runs a built function folder the way Cloud Run does: the Functions Framework's own CLI on plain
 * Node (no TypeScript loader), cwd the folder. Used by test/deploy/bundles.test.ts, the rehearsal
 * (test/rehearsal/) and the `bundles` bench scenario.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const FRAMEWORK_CLI = path.join(ROOT, "node_modules/@google-cloud/functions-framework/build/src/main.js");

export interface BundleProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote, for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Makes each package a bundle declares resolvable from `dir` (a folder holding the bundles), as
 * Cloud Build's `npm install` would: `<dir>/node_modules/<name>` links to this repository's copy.
 * Only the declared packages are linked, so a missing dependency fails as it would in the cloud.
 */
export async function linkDependencies(dir: string, packages: Iterable<string>): Promise<void> {
  for (const name of new Set(packages)) {
    const link = path.join(dir, "node_modules", name);
    await mkdir(path.dirname(link), { recursive: true });
    await symlink(path.join(ROOT, "node_modules", name), link, "dir");
  }
}

/**
 * Starts `target` from the folder `dir` on `port` (a free one by default); resolves once the
 * process is spawned.
 */
export async function startBundle(
  dir: string,
  target: string,
  env: Record<string, string>,
  port?: number,
): Promise<BundleProcess> {
  port ??= await freePort();
  return spawnServer([FRAMEWORK_CLI, `--target=${target}`, "--source=.", `--port=${port}`], dir, env, port);
}

/**
 * Starts a container image's entry (`node sse.js`, `node migrate.js`) as Cloud Run runs it: plain
 * Node in the image's folder, PORT set.
 */
export async function startEntry(
  dir: string,
  entry: string,
  env: Record<string, string>,
  port?: number,
): Promise<BundleProcess> {
  port ??= await freePort();
  return spawnServer([path.join(dir, entry)], dir, { ...env, PORT: String(port) }, port);
}

function spawnServer(args: string[], cwd: string, env: Record<string, string>, port: number): BundleProcess {
  const { NODE_OPTIONS: _loaders, ...inherited } = process.env; // no tsx or vitest hooks
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...inherited, ...env, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Sends `init` to `url` until the server answers (connection refused means not listening yet);
 * fails when the process exits first or after `timeoutMs`.
 */
export async function firstAnswer(
  proc: BundleProcess,
  pathname: string,
  init: RequestInit = {},
  timeoutMs = 30_000,
): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`the function exited: ${proc.output()}`);
    try {
      return await fetch(`${proc.url}${pathname}`, init);
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`no answer in ${timeoutMs} ms (${err}): ${proc.output()}`);
      await sleep(5);
    }
  }
}

/** Resolves once the process accepts a connection on its port (it has loaded and listens). */
export async function listening(proc: BundleProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const { port } = new URL(proc.url);
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`the function exited: ${proc.output()}`);
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (accepted) return;
    if (Date.now() > deadline) throw new Error(`not listening after ${timeoutMs} ms: ${proc.output()}`);
    await sleep(5);
  }
}

/** The anchor: the smallest function the framework can serve, in a folder like the bundles'. */
export async function helloWorld(work: string): Promise<string> {
  const dir = path.join(work, "hello");
  await mkdir(dir);
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module", main: "index.js" }));
  await writeFile(
    path.join(dir, "index.js"),
    `import { http } from "@google-cloud/functions-framework";\nhttp("hello", (req, res) => res.send("hello"));\n`,
  );
  return dir;
}

/** Current (VmRSS) and peak (VmHWM) resident memory of a process, in KiB, from /proc. */
export async function memoryKiB(pid: number): Promise<{ rssKiB: number; peakKiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssKiB: kib("VmRSS"), peakKiB: kib("VmHWM") };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A call a target must dispatch without doing work: its first plain GET, else its first route that
 * is not `internal`, parameters filled in (without credentials: 2xx from health and public routes,
 * Quire's own 4xx from the others). A target of `internal` routes only (the Cloud Scheduler and
 * Cloud Tasks callees, which would run their pass) gets a path no route has: Quire's own 404.
 */
export function probeOf(routes: readonly AnyRoute[] = []): {
  method: string;
  pathname: string;
  init: RequestInit;
} {
  const route =
    routes.find((r) => r.method === "GET" && !r.path.includes(":")) ??
    routes.find((r) => r.access !== "internal");
  if (route === undefined) return { method: "GET", pathname: "/no-such-route", init: { method: "GET" } };
  const pathname = route.path.replace(/:\w+\*/g, "acme/docs").replace(/:\w+/g, "x");
  const init: RequestInit =
    route.method === "GET"
      ? { method: "GET" }
      : { method: route.method, body: "{}", headers: { "content-type": "application/json" } };
  return { method: route.method, pathname, init };
}
