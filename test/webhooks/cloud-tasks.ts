import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import path from "node:path";
import { freePort } from "../support/ports.ts";

/** A running cloud-tasks-emulator (emulators/cloud-tasks-emulator) with one queue. */
export interface TasksEmulator {
  /** `host:port`, as CLOUD_TASKS_EMULATOR_HOST takes it. */
  host: string;
  queue: string;
  close(): Promise<void>;
}

const BINARY = path.resolve(import.meta.dirname, "../../.tools/bin/cloud-tasks-emulator");
export const QUEUE = "projects/quire-test/locations/local/queues/webhooks";

/** Starts the emulator that `npm run emulators` builds into .tools/bin, on a free port. */
export async function startTasksEmulator(): Promise<TasksEmulator> {
  if (!existsSync(BINARY))
    throw new Error(`${BINARY} is missing: run \`npm run emulators\` (npm test does it first)`);
  const port = await freePort();
  const child = spawn(BINARY, ["-host", "127.0.0.1", "-port", String(port), "-initial-queue", QUEUE], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`cloud-tasks-emulator did not start: ${output}`)),
      15_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`cloud-tasks-emulator exited (${code}): ${output}`)));
  });
  return {
    host: `127.0.0.1:${port}`,
    queue: QUEUE,
    async close() {
      process.off("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
