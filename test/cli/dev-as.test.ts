import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.ts";
import { cliBin, expectExit, runQuire, tempHome } from "./support.ts";

/** `quire --as` and QUIRE_AS against a development server with DEV_IDENTITIES, over real HTTP. */
describe("quire --as on a development server", { timeout: 90_000 }, () => {
  let app: TestApp;
  let home: Awaited<ReturnType<typeof tempHome>>;
  beforeAll(async () => {
    await cliBin();
    app = await startTestApp({ DEV_IDENTITIES: "alice@example.com,bob@example.com" });
    home = await tempHome();
  });
  afterAll(async () => {
    await app?.close();
    await home?.remove();
  });
  const quire = (args: string[], env: Record<string, string> = {}) =>
    runQuire(args, home.dir, { env: { QUIRE_SERVER: app.url, ...env } });

  it("acts as the default identity without it, and as the one named by --as or QUIRE_AS", async () => {
    const plain = expectExit(await quire(["orgs", "create", "alices", "--json"]), 0).json();
    expect(plain).toMatchObject({ created_by: "alice@example.com" });
    const flag = expectExit(
      await quire(["--as", "bob@example.com", "orgs", "create", "bobs", "--json"]),
      0,
    ).json();
    expect(flag).toMatchObject({ created_by: "bob@example.com" });
    const env = expectExit(
      await quire(["orgs", "create", "bobs2", "--json"], { QUIRE_AS: "bob@example.com" }),
      0,
    );
    expect(env.json()).toMatchObject({ created_by: "bob@example.com" });
  });

  it("exits 1 with the server's reason for an identity it does not list", async () => {
    const run = await quire(["--as", "mallory@example.com", "orgs", "list"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("not one of DEV_IDENTITIES (alice@example.com, bob@example.com)");
  });
});
