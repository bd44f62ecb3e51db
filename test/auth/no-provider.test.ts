import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { CSP } from "../../functions/web/reply.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";

/** Plain `npm start`: no OIDC_CLIENT_ID, no DEV_IDENTITY. Every message leads to the next step. */
describe("no identity provider configured", () => {
  const app = useFixture(startTestApp);

  it("shows a browser sent to sign in a page saying how to start in development mode", async () => {
    const home = await fetch(`${app.url}/ui`, { headers: { accept: "text/html" }, redirect: "manual" });
    expect(home.status).toBe(302);
    const login = await fetch(new URL(home.headers.get("location") ?? "", app.url), {
      headers: { accept: "text/html,application/xhtml+xml" },
    });
    expect(login.status).toBe(503);
    expect(login.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(login.headers.get("content-security-policy")).toBe(CSP);
    const text = await login.text();
    expect(text).toContain("DEV_IDENTITY=you@example.com npm start");
    expect(text).toContain("DEV_IDENTITIES=alice@example.com,bob@example.com npm start");
    expect(text).toContain("OIDC_CLIENT_ID");
  });

  it("keeps the JSON error for an API client, naming DEV_IDENTITY", async () => {
    const login = await fetch(`${app.url}/auth/login`);
    expect(login.status).toBe(503);
    const body = (await login.json()) as { code: string; error: string };
    expect(body.code).toBe("UNAVAILABLE");
    expect(body.error).toMatch(/OIDC_CLIENT_ID.*DEV_IDENTITY=you@example.com npm start/);
    const orgs = await fetch(`${app.url}/orgs`);
    expect(orgs.status).toBe(401);
    expect(((await orgs.json()) as { error: string }).error).toContain(
      "DEV_IDENTITY=you@example.com npm start",
    );
  });

  it("says so in the server's first log lines", async () => {
    const out = new PassThrough();
    let logged = "";
    out.on("data", (c: Buffer) => {
      logged += c.toString("utf8");
    });
    const quiet = await startTestApp({ LOG_LEVEL: "warn" }, { logTo: out });
    await quiet.close();
    const first = logged.split("\n")[0] ?? "";
    expect(first).toMatch(
      /"severity":"WARNING".*OIDC_CLIENT_ID is unset.*DEV_IDENTITY=you@example.com npm start/,
    );
  });

  it("does not say so when development mode or an OAuth client is configured", async () => {
    const configured: Record<string, string>[] = [
      { DEV_IDENTITY: "dev@example.com" },
      { OIDC_CLIENT_ID: "quire-test" },
    ];
    for (const env of configured) {
      const out = new PassThrough();
      let logged = "";
      out.on("data", (c: Buffer) => {
        logged += c.toString("utf8");
      });
      const other = await startTestApp({ ...env, LOG_LEVEL: "warn" }, { logTo: out });
      await other.close();
      expect(logged).not.toContain("OIDC_CLIENT_ID is unset");
    }
  });
});
