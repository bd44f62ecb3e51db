import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "./ports.ts";

/** A running fake-gcs-server: the Cloud Storage JSON API at `url` (http, in-memory, empty). */
export interface FakeGcs {
  url: string;
  close(): Promise<void>;
}

const BINARY = path.resolve(import.meta.dirname, "../../.tools/bin/fake-gcs-server");
const STARTUP_MS = 15_000;

/**
 * Starts the real fake-gcs-server that `npm run emulators` builds into .tools/bin, on a free port.
 * Call `close()` in afterAll; should a test file die before that, the exit hook still kills the
 * child, so no emulator outlives its test process.
 */
export async function startFakeGcs(): Promise<FakeGcs> {
  if (!existsSync(BINARY)) {
    throw new Error(`${BINARY} is missing: run \`npm run emulators\` (npm test does it first)`);
  }
  const port = await freePort();
  const child = spawn(
    BINARY,
    [
      "-scheme",
      "http",
      "-backend",
      "memory",
      "-host",
      "127.0.0.1",
      "-port",
      String(port),
      "-log-level",
      "error",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilHealthy(url, child);
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return {
    url,
    async close() {
      process.off("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/** Polls the emulator's health check; fails fast with its stderr if the process exits instead. */
async function waitUntilHealthy(url: string, child: ChildProcess): Promise<void> {
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const deadline = Date.now() + STARTUP_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`fake-gcs-server exited (${child.exitCode}): ${stderr}`);
    try {
      if ((await fetch(`${url}/_internal/healthcheck`)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`fake-gcs-server did not answer on ${url} within ${STARTUP_MS} ms: ${stderr}`);
}
