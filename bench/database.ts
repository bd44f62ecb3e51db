import pg from "pg";

/** Runs `work` on one short-lived connection to the server's database (not through Quire). */
export async function withDb<T>(databaseUrl: string, work: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

/**
 * Flushes the dirty pages of the phase before, so that flushing them (a checkpoint, which runs
 * anyway every few minutes) is not charged to whichever phase happens to run next.
 */
export async function checkpoint(databaseUrl: string): Promise<void> {
  await withDb(databaseUrl, (db) => db.query("CHECKPOINT"));
}

export async function serverVersion(databaseUrl: string): Promise<string> {
  return withDb(databaseUrl, async (db) => (await db.query("SHOW server_version")).rows[0].server_version);
}

/**
 * Vacuums and gathers planner statistics, as autovacuum does within about a minute of heavy
 * writes. The read phases start seconds after the fixtures are written, so without this, whether
 * their queries are planned with statistics, and whether autovacuum's own work on the 20,000
 * fresh commits lands inside a measured phase (it took PostgreSQL from 2.5 to 7 ms of CPU per
 * tree page for up to 50 s in some runs), would depend on autovacuum's timing.
 */
export async function analyze(databaseUrl: string): Promise<void> {
  await withDb(databaseUrl, (db) => db.query("VACUUM (ANALYZE)"));
}
