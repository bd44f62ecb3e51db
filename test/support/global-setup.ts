import { spawn } from "node:child_process";
import { generateKeyPair } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { buildCli } from "../../scripts/build-cli.ts";
import { migrate } from "../../shared/db/migrate.ts";
import { freePort } from "./ports.ts";

export const TEMPLATE_DATABASE = "quire_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** Connection string of the test cluster's maintenance database. */
    adminUrl: string;
    /** The CLI bundle (scripts/build-cli.ts) built once for the run, or why it did not build. */
    cliBundle: { bin: string } | { error: string };
    /** RSA keys (PKCS #8 PEM) for the test identity providers of each file (test/support/idp.ts). */
    idpKeys: string[];
  }
}

/** What the global setup makes once for every project that names it. */
interface Shared {
  provided: { adminUrl: string; cliBundle: { bin: string } | { error: string }; idpKeys: string[] };
  stop(): Promise<void>;
}

/**
 * The projects that use the global setup (`server` and `isolated`) share one: vitest calls the
 * setup once per project, in this one process, so the first call starts it and the last teardown
 * stops it. Kept on `globalThis` in case each project loads this module anew.
 */
const SHARED = Symbol.for("quire.test.global-setup");
type SharedSlot = { started: Promise<Shared>; users: number };
const slot = globalThis as typeof globalThis & { [SHARED]?: SharedSlot };

/**
 * Runs once per `npm test`: a PostgreSQL cluster (embedded, or the server at TEST_DATABASE_URL)
 * with a template database migrated once. Each test file then copies the template (CREATE
 * DATABASE ... TEMPLATE), which takes milliseconds and isolates the files from one another.
 * Meanwhile it bundles the CLI once for every file that runs `quire` (test/cli/support.ts), and
 * makes the RSA keys of the test identity providers (test/support/idp.ts).
 */
export default async function setup(project: TestProject) {
  slot[SHARED] ??= { started: startShared(), users: 0 };
  const shared = slot[SHARED];
  shared.users++;
  const { provided, stop } = await shared.started;
  project.provide("adminUrl", provided.adminUrl);
  project.provide("cliBundle", provided.cliBundle);
  project.provide("idpKeys", provided.idpKeys);
  return async () => {
    if (--shared.users > 0) return;
    delete slot[SHARED];
    await stop();
  };
}

async function startShared(): Promise<Shared> {
  const cliDir = await mkdtemp(path.join(tmpdir(), "quire-cli-build-"));
  const [{ url: adminUrl, stop }, cliBundle, idpKeys] = await Promise.all([
    testCluster(),
    bundleCli(cliDir),
    Promise.all(Array.from({ length: IDP_KEYS }, rsaKeyPem)),
  ]);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE}`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  await migrate(databaseUrl(adminUrl, TEMPLATE_DATABASE));
  return {
    provided: { adminUrl, cliBundle, idpKeys },
    stop: async () => {
      await stop();
      await rm(cliDir, { recursive: true, force: true });
    },
  };
}

/** Enough for the providers a file starts (a second issuer, rotations, a stranger's key). */
const IDP_KEYS = 6;

async function rsaKeyPem(): Promise<string> {
  const { privateKey } = await promisify(generateKeyPair)("rsa", { modulusLength: 2048 });
  return privateKey.export({ format: "pem", type: "pkcs8" }).toString();
}

/** The CLI bundled into `dir`; a failed build fails the tests that run it, not the whole run. */
async function bundleCli(dir: string): Promise<{ bin: string } | { error: string }> {
  try {
    return { bin: (await buildCli(path.join(dir, "cli"))).bin };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The server at TEST_DATABASE_URL, else a throw-away embedded cluster in a temporary directory
 * (removed by `stop`). Also used by `npm run snapshots` (scripts/snapshots.ts).
 */
export async function testCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  const given = process.env["TEST_DATABASE_URL"];
  if (given) return { url: given, stop: async () => {} };
  const dir = await mkdtemp(path.join(tmpdir(), "quire-test-pg-"));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as the `postgres` user and must reach its data dir
  const cluster = await startCluster(path.join(dir, "data"), await freePort());
  return {
    url: cluster.url,
    stop: async () => {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The same server's URL for another database. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Starts test/support/pg-cluster.ts as a child process and waits for its `ready <url>` line. */
async function startCluster(dataDir: string, port: number): Promise<{ url: string; stop(): Promise<void> }> {
  const script = fileURLToPath(new URL("./pg-cluster.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, dataDir, String(port)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const ready = /ready (\S+)/.exec(out);
      if (ready) resolve(ready[1]!);
    });
    child.once("exit", (code) =>
      reject(new Error(`the test PostgreSQL cluster exited (${code}) before it was ready`)),
    );
  });
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin.end();
      await exited;
    },
  };
}
