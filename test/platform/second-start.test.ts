import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { untilListening } from "../support/child.ts";
import { freePort } from "../support/ports.ts";

/** `npm start` as a terminal runs it: a child process, its exit code and what it printed. */
function startQuire(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "functions/main.ts"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function secondStart(env: Record<string, string>) {
  return spawnSync(process.execPath, ["--import", "tsx", "functions/main.ts"], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
}

async function dataFolder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "quire-second-"));
  await chmod(dir, 0o755);
  return dir;
}

describe("a second npm start while one runs", () => {
  let first: ChildProcess;
  let dataDir: string;
  let otherDir: string;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    dataDir = await dataFolder();
    otherDir = await dataFolder();
    Object.assign(env, {
      PORT: String(await freePort()),
      SVC_EMBEDDED_PG_PORT: String(await freePort()),
      SVC_DATA_DIR: dataDir,
      DEV_IDENTITY: "dev@example.com",
    });
    first = startQuire(env);
    await untilListening(first, "the first npm start");
  }, 90_000);

  afterAll(async () => {
    if (first.exitCode === null) {
      first.kill("SIGTERM");
      await once(first, "exit");
    }
    await rm(dataDir, { recursive: true, force: true });
    await rm(otherDir, { recursive: true, force: true });
  }, 60_000);

  it("on the same data folder exits 1 naming the folder, the other process's pid and SVC_DATA_DIR", () => {
    const run = secondStart({ ...env, PORT: String(Number(env["PORT"]) + 1) });
    expect(run.status).toBe(1);
    expect(run.stderr).not.toMatch(/triggerUncaughtException|\n\s+at /);
    expect(run.stderr).toMatch(
      new RegExp(
        `data folder ${dataDir} is in use by another Quire \\(its PostgreSQL runs as pid \\d+\\).*SVC_DATA_DIR`,
      ),
    );
  }, 60_000);

  it("on the same PORT exits 1 with one line naming PORT, before starting a database", () => {
    const run = secondStart({ ...env, SVC_DATA_DIR: otherDir });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split("\n");
    expect(lines.at(-1)).toMatch(new RegExp(`^quire: port ${env["PORT"]} is already in use .*set PORT`));
    expect(run.stderr).not.toMatch(/EADDRINUSE|\n\s+at /);
  }, 60_000);

  it("on the same embedded PostgreSQL port exits 1 naming SVC_EMBEDDED_PG_PORT", async () => {
    const run = secondStart({ ...env, SVC_DATA_DIR: otherDir, PORT: String(await freePort()) });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `port ${env["SVC_EMBEDDED_PG_PORT"]} for the embedded PostgreSQL is already in use.*SVC_EMBEDDED_PG_PORT`,
      ),
    );
    expect(run.stderr).not.toMatch(/triggerUncaughtException|\n\s+at /);
  }, 60_000);
});
