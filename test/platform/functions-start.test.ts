import { getTestServer } from "@google-cloud/functions-framework/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "../support/app.ts";
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

  const health = async () => {
    const server = getTestServer("health");
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    } finally {
      await new Promise((r) => server.close(r));
    }
  };

  it("answers 503 in Quire's error shape while the database is unreachable, and recovers once it is", async () => {
    const down = await health();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ code: "UNAVAILABLE", error: expect.any(String) });
    process.env["DATABASE_URL"] = await freshDatabase();
    const up = await health();
    expect(up).toEqual({ status: 200, body: { status: "ok" } });
  });
});
