import { spawn } from "node:child_process";
import { once } from "node:events";
import { Writable } from "node:stream";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../../shared/config.ts";
import { createContext } from "../../shared/context.ts";
import { clientConfig, configuredDatabase } from "../../shared/db/target.ts";
import { createLogger } from "../../shared/log.ts";
import { freshDatabase } from "../support/app.ts";
import { type CloudSqlFake, startCloudSqlFake } from "../support/cloud-sql-fake.ts";

/**
 * Cloud SQL through `@google-cloud/cloud-sql-connector` with IAM database authentication, against
 * a local fake of the Admin API, the metadata server and the instance's TLS endpoint that forwards
 * to the test cluster (test/support/cloud-sql-fake.ts). The IAM user is a role of the test
 * cluster whose password only the fake's instance side knows (the client sends none, as with
 * Cloud SQL); PostgreSQL cannot check the OAuth token, so the test checks that the connector sent
 * it to the Admin API when it asked for its client certificate.
 */
const IAM_USER = `quire-fn-${Math.random().toString(36).slice(2, 8)}@quire-test.iam`;
/** Known only to the fake's instance side, as the token check is Cloud SQL's own business. */
const IAM_PASSWORD = `pw-${Math.random().toString(36).slice(2)}`;
const saved = { ...process.env };
let fake: CloudSqlFake;
let adminUrl: string;
let env: Record<string, string>;

beforeAll(async () => {
  adminUrl = inject("adminUrl");
  const server = new URL(adminUrl);
  fake = await startCloudSqlFake({
    host: server.hostname,
    port: Number(server.port),
    login: { user: IAM_USER, password: IAM_PASSWORD },
  });
  const database = new URL(await freshDatabase({ empty: true })).pathname.slice(1);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE ROLE "${IAM_USER}" LOGIN PASSWORD '${IAM_PASSWORD}'`);
  await admin.query(`ALTER DATABASE ${database} OWNER TO "${IAM_USER}"`);
  await admin.end();
  env = {
    SVC_CLOUD_SQL_INSTANCE: fake.instance,
    SVC_CLOUD_SQL_ADMIN_ENDPOINT: fake.adminUrl,
    SVC_CLOUD_SQL_IP_TYPE: "PUBLIC",
    SVC_DB_IAM_USER: IAM_USER,
    SVC_DB_NAME: database,
    GCE_METADATA_HOST: fake.metadataHost,
    METADATA_SERVER_DETECTION: "assume-present",
    LOG_LEVEL: "error",
  };
  delete process.env["DATABASE_URL"];
  delete process.env["GOOGLE_APPLICATION_CREDENTIALS"];
  Object.assign(process.env, env);
});
afterAll(async () => {
  process.env = saved;
  await fake?.close();
});

describe("Cloud SQL through the connector, IAM database authentication", () => {
  it("the migration step connects through the connector and migrates", async () => {
    // Not spawnSync: the fake answers from this process, which must keep running meanwhile.
    const child = spawn(process.execPath, ["--import", "tsx", "functions/migrate.ts"], {
      env: { ...saved, ...env, DATABASE_URL: "" },
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const [status] = await once(child, "exit");
    expect(stderr).toBe("");
    expect(status).toBe(0);
    expect(fake.connections.length).toBeGreaterThan(0);
    expect(fake.certRequests.length).toBeGreaterThan(0);
  });

  it("asks for an ephemeral certificate with the instance's access token, for IAM login", () => {
    for (const request of fake.certRequests) {
      expect(request.authorization).toBe(`Bearer ${fake.accessToken}`);
      expect(request.accessToken).toBe(fake.accessToken);
    }
    expect(new Set(fake.connections)).toEqual(new Set(["iam-login"]));
  });

  it("opens every connection of the service (pool, LISTEN client, webhook deliverers) as the IAM user", async () => {
    const db = await configuredDatabase(loadConfig());
    if (!db) throw new Error("no database configured");
    const quiet = new Writable({ write: (_c, _e, done) => done() });
    const ctx = createContext(
      loadConfig(),
      createLogger({ format: "json", level: "error" }, quiet),
      db.target,
    );
    try {
      await ctx.events.start();
      await ctx.webhooks.start();
      const { rows } = await ctx.pool.query<{ current_user: string }>("SELECT current_user");
      expect(rows[0]?.current_user).toBe(IAM_USER);
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      const sessions = await admin.query<{ usename: string; application_name: string }>(
        "SELECT usename, application_name FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [env["SVC_DB_NAME"]],
      );
      await admin.end();
      expect(sessions.rows.length).toBeGreaterThan(1);
      for (const s of sessions.rows) expect(s.usename, s.application_name).toBe(IAM_USER);
      const direct = new pg.Client(clientConfig(db.target));
      await direct.connect();
      expect((await direct.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      await direct.end();
    } finally {
      await ctx.webhooks.close();
      await ctx.events.close();
      await ctx.pool.end();
      db.close();
    }
  });

  it("the cloud functions serve through the connector", async () => {
    await import("../../functions/index.ts");
    const server = getTestServer("meta");
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
