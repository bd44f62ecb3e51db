import { spawn } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { startStreamService } from "../../functions/sse/service.ts";
import { startTestApp } from "../support/app.ts";

/**
 * Where Quire listens (docs/configuration.md, HOST): 127.0.0.1 unless HOST widens it, and never
 * off loopback with DEV_IDENTITY, which makes anyone who reaches the port that identity.
 */

const quiet = new Writable({ write: (_c, _e, done) => done() });

/** An address of this machine that is not loopback (another host on its network would use it). */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === "IPv4" && !i.internal)?.address;

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Runs an entry point as `npm start` does and waits for it to exit (a start that should fail). */
async function runEntry(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, lines: stderr.split("\n").filter((l) => l.trim() !== "") };
}

// A database no one listens on: a start that got past its configuration fails there, loudly.
const UNREACHABLE_DB = "postgres://nobody@127.0.0.1:1/none";

describe("DEV_IDENTITY off loopback", () => {
  it.each([
    ["the local server", "functions/main.ts", "0.0.0.0"],
    ["the local server", "functions/main.ts", "::"],
    ["the event stream service", "functions/sse.ts", "0.0.0.0"],
  ])(
    "%s with HOST=%s refuses to start with one line naming both",
    { timeout: 40_000 },
    async (_name, entry, host) => {
      const run = await runEntry(entry, {
        DEV_IDENTITY: "dev@example.com",
        HOST: host,
        DATABASE_URL: UNREACHABLE_DB,
        PORT: "0",
      });
      expect(run.code, run.lines.join("\n")).toBe(2);
      expect(run.lines).toHaveLength(1);
      expect(run.lines[0]).toMatch(/^invalid configuration: DEV_IDENTITY: is refused with HOST=/);
    },
  );

  it("the event stream service without a database says so in one line too", { timeout: 40_000 }, async () => {
    const run = await runEntry("functions/sse.ts", {
      DATABASE_URL: "",
      SVC_CLOUD_SQL_INSTANCE: "",
      PORT: "0",
    });
    expect(run.code, run.lines.join("\n")).toBe(2);
    expect(run.lines).toEqual([
      "invalid configuration: DATABASE_URL: SVC_CLOUD_SQL_INSTANCE or DATABASE_URL is required by the event stream service",
    ]);
  });

  it("refuses the cloud functions' entry, which listens wherever the platform says", {
    timeout: 40_000,
  }, async () => {
    const run = await runEntry("functions/index.ts", {
      DEV_IDENTITY: "dev@example.com",
      DATABASE_URL: UNREACHABLE_DB,
    });
    expect(run.code).not.toBe(0);
    expect(run.lines.join("\n")).toContain("DEV_IDENTITY: is refused in the cloud functions");
  });
});

describe.skipIf(outsideAddress === undefined)("the listening address", () => {
  const outside = outsideAddress ?? "";

  it("is 127.0.0.1 by default: not reachable on the machine's other address", async () => {
    const app = await startTestApp({ DEV_IDENTITY: "dev@example.com" });
    try {
      const port = Number(new URL(app.url).port);
      expect(app.url).toBe(`http://127.0.0.1:${port}`);
      expect(await accepts("127.0.0.1", port)).toBe(true);
      expect(await accepts(outside, port)).toBe(false);
    } finally {
      await app.close();
    }
  });

  it("is every interface with HOST=0.0.0.0 (without DEV_IDENTITY)", async () => {
    const app = await startTestApp({ HOST: "0.0.0.0" });
    try {
      const port = Number(new URL(app.url).port);
      expect(await accepts(outside, port)).toBe(true);
      expect((await fetch(`http://${outside}:${port}/healthz`)).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("of the event stream service is 127.0.0.1 by default too", async () => {
    const app = await startTestApp();
    const stream = await startStreamService(
      { DATABASE_URL: app.databaseUrl, PORT: "0", LOG_LEVEL: "error" },
      { logTo: quiet },
    );
    try {
      const port = Number(new URL(stream.url).port);
      expect(await accepts("127.0.0.1", port)).toBe(true);
      expect(await accepts(outside, port)).toBe(false);
    } finally {
      await stream.close();
      await app.close();
    }
  });
});
