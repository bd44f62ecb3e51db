import { spawnSync } from "node:child_process";
import { Writable } from "node:stream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../functions/server.ts";
import { pendingMigrations } from "../../shared/db/migrate.ts";
import { freshDatabase } from "../support/app.ts";
import { functionHealth } from "../support/functions.ts";

async function pendingIn(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await pendingMigrations(client);
  } finally {
    await client.end();
  }
}

/** `npm run migrate`: the migration step of a deployment, run as its own process. */
function migrateStep(url: string) {
  return spawnSync(process.execPath, ["--import", "tsx", "functions/migrate.ts"], {
    env: { ...process.env, DATABASE_URL: url },
    encoding: "utf8",
  });
}

/** In the cloud, functions never migrate: a schema that is behind is refused until the step has run. */
describe("migrations as a deployment step", () => {
  const saved = { ...process.env };
  let url: string;
  beforeAll(async () => {
    url = await freshDatabase({ empty: true });
    Object.assign(process.env, { DATABASE_URL: url, LOG_LEVEL: "error", LOG_FORMAT: "json" });
    await import("../../functions/index.ts");
  });
  afterAll(() => {
    process.env = saved;
  });

  it("a function on a database that is behind answers 503 naming the missing migration, and does not migrate", async () => {
    const [first] = await pendingIn(url);
    expect(first).toMatch(/^0001_/);
    const refused = await functionHealth();
    expect(refused.status).toBe(503);
    expect(refused.body["code"]).toBe("UNAVAILABLE");
    expect(refused.body["error"]).toContain(`migration ${first} has not been applied`);
    expect(await pendingIn(url)).toContain(first);
  });

  it("npm run migrate applies the pending migrations and exits 0; the function then serves", async () => {
    const run = migrateStep(url);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(await pendingIn(url)).toEqual([]);
    expect(await functionHealth()).toEqual({ status: 200, body: { status: "ok" } });
    expect(migrateStep(url).status).toBe(0); // running it again is harmless
  });

  it("names the newest migration when only that one is missing", async () => {
    const db = await freshDatabase();
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    const { rows } = await client.query<{ name: string }>(
      "DELETE FROM schema_migrations WHERE id = (SELECT max(id) FROM schema_migrations) RETURNING name",
    );
    await client.end();
    expect(await pendingIn(db)).toEqual([rows[0]?.name]);
  });
});

describe("npm start (the embedded default)", () => {
  it("still migrates at start", async () => {
    const url = await freshDatabase({ empty: true });
    const quiet = new Writable({ write: (_c, _e, done) => done() });
    const running = await startServer(
      { DATABASE_URL: url, PORT: "0", SVC_CI_TIMERS: "false" },
      { logTo: quiet },
    );
    try {
      expect(await pendingMigrations(running.ctx.pool)).toEqual([]);
    } finally {
      await running.close();
    }
  });
});
