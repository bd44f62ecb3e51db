import { getTestServer } from "@google-cloud/functions-framework/testing";
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
    // The web group's 503 is a page with the pages' security headers, as its other refusals are.
    const web = getTestServer("web");
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
    try {
      const { port } = web.address() as { port: number };
      const page = await fetch(`http://127.0.0.1:${port}/ui/`, { headers: { accept: "text/html" } });
      expect(page.status).toBe(503);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'/);
    } finally {
      await new Promise((r) => web.close(r));
    }
    process.env["DATABASE_URL"] = await freshDatabase();
    const up = await functionHealth();
    expect(up).toEqual({ status: 200, body: { status: "ok" } });
  });
});
