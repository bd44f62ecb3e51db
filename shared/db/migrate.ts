import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { siblingModule } from "../modules.ts";
import type { Queryable } from "./pool.ts";
import { clientConfig, type DatabaseTarget } from "./target.ts";

/** The numbered plain-SQL migrations, `migrations/0001_*.sql` and on. */
export const migrationsDir = fileURLToPath(new URL("../../migrations", import.meta.url));

const MIGRATIONS_TABLE = "schema_migrations";

/**
 * Applies every pending migration. node-pg-migrate takes a PostgreSQL advisory lock in `wait` mode,
 * so several instances starting at the same moment queue behind one another and each finds the
 * schema current; none fails and none applies a file twice.
 */
export async function migrate(target: DatabaseTarget): Promise<void> {
  // Imported here: the functions only check the schema (pendingMigrations) and never load it.
  const { runner } = await import("node-pg-migrate");
  const client = new pg.Client(clientConfig(target));
  await client.connect();
  try {
    await runner({
      dbClient: client,
      dir: migrationsDir,
      direction: "up",
      migrationsTable: MIGRATIONS_TABLE,
      advisoryLockMode: "wait",
      migrationLoaderStrategies: [{ extensions: [".sql"], loader: "sql" }],
      checkOrder: true,
      log: () => {},
    });
  } finally {
    await client.end();
  }
}

/**
 * `npm start`'s migration: only when something is pending, so that a restart on a current schema
 * never migrates, and then in a child process (migrate-process.ts): node-pg-migrate, with jiti (a
 * TypeScript loader) and glob, is about 3 MiB of code, and applying the migrations in the server
 * kept some 9 MiB of RSS in it for good (docs/benchmarks.md, "Where the memory goes").
 */
export async function migrateIfPending(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    if ((await pendingMigrations(client)).length === 0) return;
  } finally {
    await client.end();
  }
  await migrateInChild(databaseUrl);
}

// migrate-process.js in npm start's bundle (scripts/build-local.ts); the .ts file from the sources,
// which Node runs by stripping its types.
const MIGRATE_PROCESS = fileURLToPath(siblingModule(import.meta.url, "migrate-process"));

/** How much of the child's error output a failed migration's error carries: its end. */
const CHILD_ERROR_TAIL_CHARS = 4000;

async function migrateInChild(databaseUrl: string): Promise<void> {
  const child = spawn(process.execPath, [MIGRATE_PROCESS], {
    env: { ...process.env, QUIRE_MIGRATE_DATABASE_URL: databaseUrl },
    stdio: ["ignore", "inherit", "pipe"],
  });
  let errors = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    errors = (errors + text).slice(-CHILD_ERROR_TAIL_CHARS);
  });
  const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
  if (code !== 0)
    throw new Error(
      `the migrations failed (${signal ?? `exit code ${code}`}): ${errors.trim() || "no output"}`,
    );
}

/** The migrations this code knows, by the name node-pg-migrate records (the file name without `.sql`). */
async function knownMigrations(): Promise<string[]> {
  const files = await readdir(migrationsDir);
  return files
    .filter((f) => f.endsWith(".sql"))
    .map((f) => f.slice(0, -".sql".length))
    .sort();
}

/**
 * The migrations this code needs that the database has not applied, oldest first (empty when the
 * schema is current). A database never migrated has no migrations table: every one is pending.
 */
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
    `public.${MIGRATIONS_TABLE}`,
  ]);
  const applied = new Set<string>();
  if (rows[0]?.present) {
    const done = await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
    for (const row of done.rows) applied.add(row.name);
  }
  return (await knownMigrations()).filter((name) => !applied.has(name));
}
