import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildContainer } from "../../scripts/build.ts";
import { linkDependencies } from "../../scripts/bundle-process.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { repoWithOwner, useFixture } from "../support/world.ts";
import { startPubsubFake } from "./pubsub-fake.ts";
import { commitEvents, openSse, type SseClient } from "./sse.ts";

/**
 * The event stream service (functions/sse.ts) as its own process, started as its deployment
 * starts it (`node --import tsx functions/sse.ts` with env), fed by the Pub/Sub fake, on the same
 * PostgreSQL as a normal test app. The app runs the local fan-out (no relay), so every event the
 * service's clients get went through the relay the service itself runs.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const TOPIC = "quire-events-sse-service";

interface StreamService {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** How the service is started: from the sources through tsx, or a built entry on plain Node. */
interface Launch {
  args: string[];
  cwd: string;
}
const FROM_SOURCE: Launch = { args: ["--import", "tsx", "functions/sse.ts"], cwd: ROOT };

/** Spawns the service; resolves once it listens, rejects with its output when it exits first. */
async function spawnService(env: Record<string, string>, launch = FROM_SOURCE): Promise<StreamService> {
  const child = spawn(process.execPath, launch.args, {
    cwd: launch.cwd,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  let output = "";
  child.stdout?.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (output += c.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  // Port 0: the service's own log line says which port it got (a port chosen here could be taken
  // by another test file before the service, seconds later, listens on it).
  const listening = new Promise<string>((resolve) => {
    const check = () => {
      const line = output.split("\n").find((l) => l.includes("event stream service is listening"));
      const port = line && /"port":(\d+)/.exec(line)?.[1];
      if (port) resolve(port);
    };
    child.stdout?.on("data", check);
  });
  const first = await Promise.race([listening, exited.then((code) => ({ exited: code }))]);
  if (typeof first !== "string")
    throw new Error(`the event stream service exited (${first.exited}): ${output}`);
  return {
    url: `http://127.0.0.1:${first}`,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

const fake = useFixture(startPubsubFake);
const app = useFixture(() => startTestApp());
const services: StreamService[] = [];
const clients: SseClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of services) await s.stop();
});

async function serviceEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return {
    PORT: "0",
    DATABASE_URL: app.databaseUrl,
    OIDC_ISSUER: app.idp.issuer,
    GLOBAL_ADMINS: ADMIN,
    SVC_EVENT_FANOUT: "pubsub",
    PUBSUB_EMULATOR_HOST: fake.host,
    GOOGLE_CLOUD_PROJECT: "quire-test",
    SVC_PUBSUB_TOPIC: TOPIC,
    ...extra,
  };
}

async function startService(
  extra: Record<string, string> = {},
  launch = FROM_SOURCE,
): Promise<StreamService> {
  const service = await spawnService(await serviceEnv(extra), launch);
  services.push(service);
  return service;
}

async function stream(service: StreamService, p: string, headers?: Record<string, string>) {
  const s = await openSse(service.url, p, {
    token: await app.idp.token(ADMIN),
    ...(headers ? { headers } : {}),
  });
  clients.push(s);
  expect(s.status).toBe(200);
  return s;
}

const webhookLoops = async () =>
  (
    await app.sql<{ n: number }>(
      // This file's database only: the cluster also serves the files running beside this one.
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'quire-webhooks' AND datname = current_database()",
    )
  )[0]?.n;

describe("the event stream service, as its own process", () => {
  it("refuses to start without a database (Cloud SQL or DATABASE_URL): it never runs an embedded one", async () => {
    const env = await serviceEnv();
    delete env["DATABASE_URL"];
    await expect(spawnService(env)).rejects.toThrow(/exited \(2\).*DATABASE_URL is required/s);
  });

  it("relays a commit made through the app to its clients, and starts nothing else", async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), "quire-sse-")), "data");
    const loopsBefore = await webhookLoops();
    const service = await startService({ SVC_DATA_DIR: dataDir, SVC_CI_TIMERS: "true" });
    // The relay runs from the start, before any client: someone must publish the log in the cloud.
    expect(service.output()).toMatch(/"relaying":true.*event stream service is listening/);
    const fx = await repoWithOwner(app);
    const s = await stream(service, `/repos/${fx.repo}/-/events`);
    const seq = await fx.commit("main", { "a.md": "through the app" }, "through the app");
    await s.until((c) => commitEvents(c).length >= 1, 15_000, "the commit");
    expect(commitEvents(s)[0]?.envelope.data).toMatchObject({ repo: fx.repo, sequence: seq });

    expect(service.output()).toContain("this instance publishes events to Pub/Sub");
    expect(service.output()).not.toMatch(/embedded/i);
    expect(existsSync(dataDir)).toBe(false);
    expect(await webhookLoops()).toBe(loopsBefore); // no webhook deliverer of its own
    // Only the streams and /healthz: every other route is not here.
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    const orgs = await fetch(`${service.url}/orgs`, {
      headers: { authorization: `Bearer ${await app.idp.token(ADMIN)}` },
    });
    expect(orgs.status).toBe(404);
    expect(await service.stop()).toBe(0); // so the next test's services lead the relay
  });

  it("ends streams with a last comment on SIGTERM, and a client resumes on a new process with Last-Event-ID", async () => {
    const fx = await repoWithOwner(app);
    const first = await startService();
    const s = await stream(first, `/repos/${fx.repo}/-/events`);
    await fx.commit("main", { "a.md": "before" }, "before restart");
    const [seen] = await s.waitForEvents(1, 15_000);
    expect(first.output()).toContain("this instance publishes events to Pub/Sub");

    expect(await first.stop()).toBe(0);
    await s.ended;
    expect(s.messages.at(-1)?.comment).toBe("server shutting down; reconnect with Last-Event-ID");
    expect(first.output()).toContain("event stream service stopped");

    await fx.commit("main", { "a.md": "while down 1" }, "while down 1");
    await fx.commit("main", { "a.md": "while down 2" }, "while down 2");
    const second = await startService();
    const resumed = await stream(second, `/repos/${fx.repo}/-/events`, { "last-event-id": seen?.id ?? "" });
    expect(second.output()).toContain("this instance publishes events to Pub/Sub"); // the relay too restarted
    await fx.commit("main", { "a.md": "after" }, "after restart");
    await resumed.until((c) => commitEvents(c).length >= 3, 15_000, "three commits");
    expect(commitEvents(resumed).map((e) => e.envelope.data.message)).toEqual([
      "while down 1",
      "while down 2",
      "after restart",
    ]);
    expect(resumed.messages.some((m) => m.event === "gap")).toBe(false);
  });

  it("runs from the built image's folder (dist/container, sse.js) on plain Node and serves a stream", async () => {
    // What the Dockerfile copies: the bundles, the migrations and package.json's dependencies.
    for (const earlier of services) await earlier.stop(); // so this one leads the relay
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "quire-container-")), "container");
    const built = await buildContainer(dir);
    await linkDependencies(dir, Object.keys(built.dependencies));
    const service = await startService({}, { args: ["sse.js"], cwd: dir });
    const fx = await repoWithOwner(app);
    const s = await stream(service, `/repos/${fx.repo}/-/events`);
    const seq = await fx.commit("main", { "a.md": "through the image" }, "through the image");
    await s.until((c) => commitEvents(c).length >= 1, 15_000, "the commit");
    expect(commitEvents(s)[0]?.envelope.data).toMatchObject({ repo: fx.repo, sequence: seq });
    expect(service.output()).toContain("this instance publishes events to Pub/Sub");
    expect(await service.stop()).toBe(0);
  });
});
