import { randomBytes } from "node:crypto";
import pg from "pg";
import { databaseUrl } from "./global-setup.ts";

/**
 * A fresh Cloud SQL database's privileges, reproduced on the test cluster (used by
 * test/platform/cloud-sql-privileges.test.ts and the rehearsal, test/rehearsal/): IAM database
 * users start with no privileges; PUBLIC may not create in schema `public`; the database belongs
 * to a `cloudsqlsuperuser`-like role that is not a superuser, and the built-in user terraform
 * creates (the migrator, terraform/database.tf) is a member of it. Nothing is granted: the
 * migration step does that (shared/db/grants.ts).
 */
export interface CloudSqlLikeDatabase {
  database: string;
  /** The built-in user the migration job logs in as, with a password. */
  migrator: string;
  /** The functions' IAM database user (`google_sql_user.functions`). */
  functions: string;
  /** The SSE service's IAM database user (`google_sql_user.events`). */
  events: string;
  /** Every user's password (an IAM user's stands for its token, which the Cloud SQL fake sends). */
  password(user: string): string;
  /** A URL that logs `user` in directly (no connector). */
  urlAs(user: string): string;
  drop(): Promise<void>;
}

async function asSuperuser(url: string, sql: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of sql) await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function createCloudSqlLikeDatabase(adminUrl: string): Promise<CloudSqlLikeDatabase> {
  const suffix = randomBytes(4).toString("hex");
  const cloudsqlsuperuser = `cloudsqlsuperuser_${suffix}`;
  const db: CloudSqlLikeDatabase = {
    database: `cloudsql_${suffix}`,
    migrator: `quire_migrator_${suffix}`,
    functions: `quire-functions-${suffix}@quire-test.iam`,
    events: `quire-events-${suffix}@quire-test.iam`,
    password: (user) => `${user}-${suffix}-pw`,
    urlAs(user) {
      const url = new URL(databaseUrl(adminUrl, db.database));
      url.username = encodeURIComponent(user);
      url.password = db.password(user);
      return url.toString();
    },
    drop: () =>
      asSuperuser(adminUrl, [
        `DROP DATABASE IF EXISTS ${db.database} WITH (FORCE)`,
        ...[db.migrator, db.functions, db.events, cloudsqlsuperuser].map((r) => `DROP ROLE IF EXISTS "${r}"`),
      ]),
  };
  await asSuperuser(adminUrl, [
    `CREATE ROLE ${cloudsqlsuperuser} NOLOGIN CREATEROLE CREATEDB`,
    `CREATE ROLE ${db.migrator} LOGIN CREATEROLE CREATEDB PASSWORD '${db.password(db.migrator)}' IN ROLE ${cloudsqlsuperuser}`,
    `CREATE ROLE "${db.functions}" LOGIN PASSWORD '${db.password(db.functions)}'`,
    `CREATE ROLE "${db.events}" LOGIN PASSWORD '${db.password(db.events)}'`,
    `CREATE DATABASE ${db.database} OWNER ${cloudsqlsuperuser}`,
  ]);
  await asSuperuser(databaseUrl(adminUrl, db.database), ["REVOKE CREATE ON SCHEMA public FROM PUBLIC"]);
  return db;
}
