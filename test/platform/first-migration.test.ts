import { Writable } from "node:stream";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { startServer } from "../../functions/server.ts";
import { freshDatabase } from "../support/app.ts";

const quiet = new Writable({ write: (_c, _e, done) => done() });

/** `npm start` on a database whose schema is behind applies it in a child process (shared/db/migrate.ts). */
describe("a first start's migrations", () => {
  it("are applied before the server listens", async () => {
    const url = await freshDatabase({ empty: true });
    const server = await startServer({ DATABASE_URL: url, PORT: "0", LOG_LEVEL: "error" }, { logTo: quiet });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM schema_migrations");
      await db.end();
      expect(rows[0]?.n).toBeGreaterThanOrEqual(22);
    } finally {
      await server.close();
    }
  });

  it("stop the start with the failing migration's own error when one fails", async () => {
    const url = await freshDatabase({ empty: true });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    await db.query("CREATE TABLE orgs (planted int)"); // 0001 creates orgs: it fails
    try {
      await expect(
        startServer({ DATABASE_URL: url, PORT: "0", LOG_LEVEL: "error" }, { logTo: quiet }),
      ).rejects.toThrow(/^the migrations failed \(exit code 1\): [\s\S]*relation "orgs" already exists/);
      const { rows } = await db.query<{ t: string | null }>(
        "SELECT to_regclass('public.commits')::text AS t",
      );
      expect(rows[0]?.t).toBeNull();
    } finally {
      await db.end();
    }
  });
});
