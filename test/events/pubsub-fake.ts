import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import path from "node:path";
import { freePort } from "../support/ports.ts";

/** A running Pub/Sub fake (Google's pstest over gRPC), empty and in memory. `host` is for PUBSUB_EMULATOR_HOST. */
export interface PubsubFake {
  host: string;
  close(): Promise<void>;
}

const BINARY = path.resolve(import.meta.dirname, "../../.tools/bin/pubsub-fake");

/** Starts the pubsub-fake that `npm run emulators` builds; resolves once it listens. */
export async function startPubsubFake(): Promise<PubsubFake> {
  if (!existsSync(BINARY))
    throw new Error(`${BINARY} is missing: run \`npm run emulators\` (npm test does it first)`);
  const port = await freePort();
  const child = spawn(BINARY, ["-host", "127.0.0.1", "-port", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pubsub-fake did not start: ${output}`)), 15_000);
    child.stdout!.on("data", (c: Buffer) => {
      output += c.toString();
      if (output.includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`pubsub-fake exited (${code}): ${output}`));
    });
  });
  return {
    host: `127.0.0.1:${port}`,
    async close() {
      process.off("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
