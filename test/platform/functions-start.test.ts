import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../support/app.ts";
import { functionHealth } from "../support/functions.ts";
import { freePort } from "../support/ports.ts";

/** A cloud instance whose database is unreachable at its cold start, then reachable. */
describe("functions framework cold start", () => {
  const saved = { ...process.env };
  beforeAll(async () => {
    Object.assign(process.env, {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/none`,
      LOG_LEVEL: "error",
    });
    await import("../../functions/index.ts");
  });
  afterAll(() => {
    process.env = saved;
  });

  it("answers 503 in Quire's error shape while the database is unreachable, and recovers once it is", async () => {
    const down = await functionHealth();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ code: "UNAVAILABLE", error: expect.any(String) });
    process.env["DATABASE_URL"] = await freshDatabase();
    const up = await functionHealth();
    expect(up).toEqual({ status: 200, body: { status: "ok" } });
  });
});
