import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { migrate } from "../shared/db/migrate.ts";
import { databaseUrl, testCluster } from "../test/support/global-setup.ts";
import { SCHEMA_FILE, SQL_DIR, staticSnapshots } from "./snapshots/files.ts";
import { dumpSchema } from "./snapshots/schema.ts";

/**
 * `npm run snapshots`: writes every generated file that is committed for review and checked by
 * the tests (test/fast/snapshots.test.ts, test/platform/schema.test.ts): the OpenAPI document,
 * the SQL catalogue and the schema after every migration. The schema needs a PostgreSQL: the
 * server at TEST_DATABASE_URL, else a throw-away embedded cluster, as `npm test` uses.
 */
const root = fileURLToPath(new URL("..", import.meta.url));

async function schemaSnapshot(): Promise<string> {
  const cluster = await testCluster();
  const name = `quire_snapshot_${process.pid}`;
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = databaseUrl(cluster.url, name);
    await migrate(url);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      return await dumpSchema(db);
    } finally {
      await db.end();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`).catch(() => {});
    await admin.end();
    await cluster.stop();
  }
}

async function write(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), text);
  process.stdout.write(`wrote ${file}\n`);
}

const files = staticSnapshots(root);
await rm(path.join(root, SQL_DIR), { recursive: true, force: true });
for (const [file, text] of files) await write(file, text);
await write(SCHEMA_FILE, await schemaSnapshot());
