import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.ts";
import { errorOf } from "../support/world.ts";

describe("database availability", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("answers {status: ok} without credentials while the database answers", async () => {
    const res = await app.anonymous.get("/healthz");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });

  it("answers 503 UNAVAILABLE in the error shape when the database refuses connections", async () => {
    const database = new URL(app.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: inject("adminUrl") });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [
        database,
      ]);
      const res = await app.anonymous.get("/healthz");
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ code: "UNAVAILABLE", error: "the database does not answer" });
      const other = await app.as("ann@example.com").get("/orgs");
      expect(other.status).toBe(503);
      expect(errorOf(other).code).toBe("UNAVAILABLE");
    } finally {
      await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    expect((await app.anonymous.get("/healthz")).status).toBe(200);
  });
});
