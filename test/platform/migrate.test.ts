import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { migrate, migrationsDir } from "../../shared/db/migrate.ts";
import { databaseUrl } from "../support/global-setup.ts";

async function emptyDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: inject("adminUrl") });
  await admin.connect();
  const name = `m_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return databaseUrl(inject("adminUrl"), name);
}

describe("migrations", () => {
  it("are safe when several instances start at the same moment: each file applies once", async () => {
    const url = await emptyDatabase();
    await Promise.all(Array.from({ length: 6 }, () => migrate(url)));
    const files = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql"));
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query("SELECT name FROM schema_migrations ORDER BY name");
      expect(rows.map((r) => `${r.name}.sql`)).toEqual(files.sort());
      const tables = await db.query(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename = 'commits'",
      );
      expect(tables.rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });

  it("are numbered plain SQL files", async () => {
    const files = (await readdir(migrationsDir)).sort();
    expect(files.length).toBeGreaterThan(0);
    for (const [i, f] of files.entries()) {
      expect(f).toMatch(new RegExp(`^${String(i + 1).padStart(4, "0")}_[a-z0-9_]+\\.sql$`));
    }
  });
});
