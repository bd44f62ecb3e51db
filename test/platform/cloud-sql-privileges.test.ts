import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer } from "../../functions/server.ts";
import { localEnv, terraformSettings } from "../deploy/terraform-env.ts";
import { api } from "../support/api.ts";
import { ADMIN, type TestApp, testAppOver } from "../support/app.ts";
import { type CloudSqlLikeDatabase, createCloudSqlLikeDatabase } from "../support/cloud-sql-database.ts";
import { type CloudSqlFake, startCloudSqlFake } from "../support/cloud-sql-fake.ts";
import { startTestIdp } from "../support/idp.ts";
import { expectOk, world } from "../support/world.ts";

/**
 * A fresh Cloud SQL instance's privileges, reproduced on the test cluster (test/support/
 * cloud-sql-database.ts, which the rehearsal uses too): IAM database users start with no
 * privileges; PUBLIC may not create in schema `public`; the database belongs to a
 * `cloudsqlsuperuser`-like role that is not a superuser, and the built-in user terraform creates
 * (the migrator) is a member of it. The migration step runs as deployed: functions/migrate.ts with
 * the environment and the secret terraform gives the job (terraform/migrate.tf), through the Cloud
 * SQL fake. Afterwards the functions' user commits, merges and reads, and cannot change the schema.
 */
const INSUFFICIENT_PRIVILEGE = "42501";

let db: CloudSqlLikeDatabase;
let fake: CloudSqlFake;

async function sqlAs<T>(user: string, run: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.urlAs(user) });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** The SQLSTATE `sql` fails with as `user`, or "ok". */
const outcome = (user: string, sql: string) =>
  sqlAs(user, (c) =>
    c.query(`BEGIN; ${sql}; ROLLBACK`).then(
      () => "ok",
      (err: { code?: string }) => err.code ?? String(err),
    ),
  );

/**
 * The migration job's environment as terraform/migrate.tf sets it (evaluated by `terraform
 * console`, test/deploy/terraform-env.ts), each resource reference resolved here.
 */
async function jobEnvironment(): Promise<Record<string, string>> {
  const settings = await terraformSettings({
    project_id: "quire-test",
    domain: "quire.test",
    container_image: "unused",
    bootstrap_admin: ADMIN,
    oidc_client_id: "quire-test",
  });
  const job = { env: settings.migrate.env, secrets: settings.migrate.secrets };
  return localEnv(settings, job, {
    publicUrl: "https://quire.test",
    lbUrl: "http://127.0.0.1:1",
    functionUrls: {},
    references: {
      "google_sql_database_instance.quire.connection_name": fake.instance,
      "google_sql_database.quire.name": db.database,
      "google_sql_user.migrator.name": db.migrator,
      "google_sql_user.functions.name": db.functions,
      "google_sql_user.events.name": db.events,
    },
    // The secret's value, as Cloud Run mounts it.
    secrets: { SVC_DB_PASSWORD: db.password(db.migrator) },
    fileDir: tmpdir(),
  });
}

async function runMigrationJob(env: Record<string, string>): Promise<{ status: number; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "functions/migrate.ts"], {
    env: {
      PATH: process.env["PATH"] ?? "",
      ...env,
      SVC_CLOUD_SQL_ADMIN_ENDPOINT: fake.adminUrl,
      GCE_METADATA_HOST: fake.metadataHost,
      METADATA_SERVER_DETECTION: "assume-present",
    },
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  // Not spawnSync: the fake answers from this process, which must keep running meanwhile.
  const [status] = await once(child, "exit");
  return { status: status as number, stderr };
}

beforeAll(async () => {
  const adminUrl = inject("adminUrl");
  const server = new URL(adminUrl);
  // No IAM login goes through the fake here: the job logs in with the migrator's password.
  fake = await startCloudSqlFake({
    host: server.hostname,
    port: Number(server.port),
    login: { user: "nobody", password: "unused" },
  });
  db = await createCloudSqlLikeDatabase(adminUrl);
});

afterAll(async () => {
  await fake?.close();
  await db?.drop();
});

describe("a fresh Cloud SQL database, set up by the migration job as deployed", () => {
  it("starts as Cloud SQL does: neither the migrator nor the IAM users are superusers, and IAM users cannot create", async () => {
    expect(await outcome(db.functions, "CREATE TABLE t (x int)")).toBe(INSUFFICIENT_PRIVILEGE);
    const roles = await sqlAs(db.migrator, (c) =>
      c.query("SELECT rolname, rolsuper FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname", [
        [db.migrator, db.functions, db.events],
      ]),
    );
    expect(roles.rows.every((r) => r.rolsuper === false)).toBe(true);
  });

  it("the job migrates as the built-in migrator (password login through the connector) and grants the IAM users", async () => {
    const env = await jobEnvironment();
    expect(env["SVC_DB_PASSWORD"]).toBe(db.password(db.migrator));
    const run = await runMigrationJob(env);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    // A certificate asked for without a token: a built-in user's connection, not an IAM login.
    expect(new Set(fake.connections)).toEqual(new Set(["cert-login"]));
    const owners = await sqlAs(db.migrator, (c) =>
      c.query("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'"),
    );
    expect(owners.rows).toEqual([{ tableowner: db.migrator }]);
    // A second run (the next deployment) grants again and changes nothing.
    expect((await runMigrationJob(env)).status).toBe(0);
  });

  describe("then the functions' user", () => {
    let app: TestApp;
    beforeAll(async () => {
      const idp = await startTestIdp();
      const blobDir = await mkdtemp(path.join(tmpdir(), "quire-blobs-"));
      const url = db.urlAs(db.functions);
      const server = await startServer(
        {
          DATABASE_URL: url,
          PORT: "0",
          OIDC_ISSUER: idp.issuer,
          GLOBAL_ADMINS: ADMIN,
          LOG_LEVEL: "error",
          SVC_BLOB_LOCAL_DIR: blobDir,
          SVC_CI_TIMERS: "false",
        },
        { logTo: new Writable({ write: (_c, _e, done) => done() }) },
      );
      app = testAppOver(server, idp, url, blobDir);
    });
    afterAll(async () => {
      await app?.close();
    });

    it("commits, merges and reads", async () => {
      const repo = await world(app).repo();
      await repo.commit("main", { "a.md": "a" });
      await repo.branch("feature", { files: { "a.md": "changed", "b.md": "b" } });
      const proposal = await api(repo.client).post("/repos/:repo*/-/proposals", {
        params: { repo: repo.repo },
        body: { branch: "feature", title: "Feature" },
      });
      expectOk(proposal, 201);
      const merged = await api(repo.client).post("/repos/:repo*/-/merge", {
        params: { repo: repo.repo },
        body: { branch: "feature" },
      });
      expectOk(merged, 200);
      const read = await api(repo.client).get("/repos/:repo*/-/file/:path*", {
        params: { repo: repo.repo, path: "b.md" },
      });
      expectOk(read, 200);
      const [session] = await app.sql<{ user: string }>("SELECT current_user AS user");
      expect(session?.user).toBe(db.functions);
    });

    it("cannot change the schema: CREATE, ALTER, DROP, TRUNCATE are refused", async () => {
      for (const ddl of [
        "CREATE TABLE sneaky (x int)",
        "ALTER TABLE repos ADD COLUMN sneaky int",
        "DROP TABLE events",
        "CREATE INDEX sneaky ON repos (name)",
        "TRUNCATE events",
        "CREATE SCHEMA sneaky",
      ])
        expect(await outcome(db.functions, ddl), ddl).toBe(INSUFFICIENT_PRIVILEGE);
    });

    it("reads and writes a table a later migration adds, before any grant is repeated (default privileges)", async () => {
      await sqlAs(db.migrator, (c) =>
        c.query("CREATE TABLE later_feature (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)"),
      );
      expect(await outcome(db.functions, "INSERT INTO later_feature (v) VALUES ('x')")).toBe("ok");
      expect(await outcome(db.functions, "UPDATE later_feature SET v = 'y'")).toBe("ok");
      expect(await outcome(db.events, "SELECT * FROM later_feature")).toBe("ok");
      expect(await outcome(db.events, "INSERT INTO later_feature (v) VALUES ('x')")).toBe(
        INSUFFICIENT_PRIVILEGE,
      );
    });
  });

  it("the SSE service's user reads, moves the relay's cursor and deletes events, and nothing more", async () => {
    expect(await outcome(db.events, "SELECT * FROM repos")).toBe("ok");
    expect(await outcome(db.events, "DELETE FROM events")).toBe("ok");
    expect(await outcome(db.events, "SELECT * FROM event_relay_cursors FOR UPDATE")).toBe("ok");
    expect(await outcome(db.events, "UPDATE repos SET name = name")).toBe(INSUFFICIENT_PRIVILEGE);
    expect(await outcome(db.events, "CREATE TABLE sneaky (x int)")).toBe(INSUFFICIENT_PRIVILEGE);
  });
});
