import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import pg from "pg";
import { inject } from "vitest";
import { type RunningServer, startServer } from "../../functions/server.ts";
import type { Clock } from "../../shared/clock.ts";
import type { ContextOptions } from "../../shared/context.ts";
import { type Client, client } from "./client.ts";
import { databaseUrl, TEMPLATE_DATABASE } from "./global-setup.ts";
import { startTestIdp, type TestIdp } from "./idp.ts";

/** The global admin every test app knows. */
export const ADMIN = "admin@quire.test";

export interface TestApp {
  url: string;
  server: RunningServer;
  idp: TestIdp;
  databaseUrl: string;
  /** A client signed in as `email` with a fresh ID token from the test identity provider. */
  as(email: string): Client;
  /** A client that sends no credentials. */
  anonymous: Client;
  /** Direct SQL on the app's database, for assertions that nothing changed. */
  sql<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** What every test app offers over its server: clients signed in as anyone or no one, and SQL. */
export function appAccess(
  url: string,
  idp: TestIdp,
  pool: pg.Pool,
): Pick<TestApp, "as" | "anonymous" | "sql"> {
  return {
    as: (email) => client(url, () => idp.token(email)),
    anonymous: client(url, async () => null),
    sql: async (text, values) => (await pool.query(text, values)).rows,
  };
}

/** Test apps log into the void unless QUIRE_TEST_LOGS=1, so expected errors do not clutter the run. */
function quietLog(): NodeJS.WritableStream {
  if (process.env["QUIRE_TEST_LOGS"] === "1") return process.stdout;
  return new Writable({ write: (_chunk, _enc, done) => done() });
}

/**
 * A fresh copy of the migrated template database on the test cluster; with `{ empty: true }`, a
 * database never migrated (for the migration step's tests).
 */
export async function freshDatabase(opts: { empty?: boolean } = {}): Promise<string> {
  const adminUrl = inject("adminUrl");
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${opts.empty ? "" : ` TEMPLATE ${TEMPLATE_DATABASE}`}`);
  } finally {
    await admin.end();
  }
  return databaseUrl(adminUrl, name);
}

/**
 * Starts Quire exactly as `npm start` does (same server function), on a free port, against a
 * fresh database and a local identity provider. `env` adds or overrides variables.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  opts: { logTo?: NodeJS.WritableStream; context?: ContextOptions } = {},
): Promise<TestApp> {
  const idp = await startTestIdp();
  const dbUrl = await freshDatabase();
  const blobDir = await mkdtemp(path.join(tmpdir(), "quire-blobs-"));
  const server = await startServer(
    {
      DATABASE_URL: dbUrl,
      PORT: "0",
      OIDC_ISSUER: idp.issuer,
      GLOBAL_ADMINS: ADMIN,
      LOG_LEVEL: "error",
      SVC_BLOB_LOCAL_DIR: blobDir,
      // No CI cron or reaper timers: tests run those passes themselves, at the moments they choose.
      SVC_CI_TIMERS: "false",
      // Every reply is checked against the response its route declares (shared/http/responses.ts).
      SVC_CHECK_RESPONSES: "true",
      ...env,
    },
    { logTo: opts.logTo ?? quietLog(), ...(opts.context ? { context: opts.context } : {}) },
  );
  return testAppOver(server, idp, dbUrl, blobDir);
}

/**
 * A TestApp over a started server: its clients, SQL on its database, and a `close` that stops the
 * server and the identity provider, removes the blob folder, then runs `onClose` (a test that
 * made its own database drops it there).
 */
export function testAppOver(
  server: RunningServer,
  idp: TestIdp,
  databaseUrl: string,
  blobDir: string,
  onClose: () => Promise<void> = async () => {},
): TestApp {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // A test that terminates the database's backends kills this pool's idle clients too: drop them quietly.
  pool.on("error", () => {});
  return {
    url: server.url,
    server,
    idp,
    databaseUrl,
    ...appAccess(server.url, idp, pool),
    async close() {
      await pool.end();
      await server.close();
      await idp.close();
      await rm(blobDir, { recursive: true, force: true });
      await onClose();
    },
  };
}

/**
 * Another Quire instance in this process on `app`'s database, identity provider and blob
 * directory (a restart, a second runner, a second SSE node), started with the server function
 * `npm start` uses; `env` adds or overrides variables, `clock` shares a manual clock.
 */
export function startSecondInstance(
  app: TestApp,
  env: Record<string, string> = {},
  clock?: Clock,
): Promise<RunningServer> {
  return startServer(
    {
      DATABASE_URL: app.databaseUrl,
      PORT: "0",
      OIDC_ISSUER: app.idp.issuer,
      GLOBAL_ADMINS: ADMIN,
      LOG_LEVEL: "error",
      SVC_BLOB_LOCAL_DIR: app.server.ctx.config.SVC_BLOB_LOCAL_DIR,
      SVC_CI_TIMERS: "false",
      ...env,
    },
    { logTo: quietLog(), ...(clock ? { context: { clock } } : {}) },
  );
}
