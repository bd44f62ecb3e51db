import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import pg from "pg";

/** The numbered plain-SQL migrations, `migrations/0001_*.sql` and on. */
export const migrationsDir = fileURLToPath(new URL("../../migrations", import.meta.url));

/**
 * Applies every pending migration. node-pg-migrate takes a PostgreSQL advisory lock in `wait` mode,
 * so several instances starting at the same moment queue behind one another and each finds the
 * schema current; none fails and none applies a file twice.
 */
export async function migrate(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await runner({
      dbClient: client,
      dir: migrationsDir,
      direction: "up",
      migrationsTable: "schema_migrations",
      advisoryLockMode: "wait",
      migrationLoaderStrategies: [{ extensions: [".sql"], loader: "sql" }],
      checkOrder: true,
      log: () => {},
    });
  } finally {
    await client.end();
  }
}
