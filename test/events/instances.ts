import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { Writable } from "node:stream";
import type { RunningServer } from "../../functions/server.ts";
import { ADMIN, startSecondInstance, type TestApp } from "../support/app.ts";
import { untilListening } from "../support/child.ts";
import { freePort } from "../support/ports.ts";

const _quiet = () => new Writable({ write: (_c, _e, done) => done() });

/** A second Quire instance in this process, on its own port, against `app`'s database and identity provider. */
export const secondInstance = (app: TestApp, env: Record<string, string> = {}): Promise<RunningServer> =>
  startSecondInstance(app, env);

export interface ChildServer {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Quire as a separate process (`tsx functions/main.ts`, as `npm start`), against `app`'s database. */
export async function childInstance(app: TestApp, env: Record<string, string> = {}): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(path.join(ROOT, "node_modules/.bin/tsx"), ["functions/main.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: process.env["HOME"] ?? "/tmp",
      PORT: String(port),
      DATABASE_URL: app.databaseUrl,
      OIDC_ISSUER: app.idp.issuer,
      GLOBAL_ADMINS: ADMIN,
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = `http://127.0.0.1:${port}`;
  await untilListening(child);
  return {
    url,
    child,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
