import { readFile } from "node:fs/promises";
import path from "node:path";
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

  it("clones, file contents included, a repo only the --as identity can read", async () => {
    const asBob = (path: string, body: unknown) =>
      fetch(app.url + path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-quire-dev-identity": "bob@example.com" },
        body: JSON.stringify(body),
      });
    expect((await asBob("/orgs", { name: "bobonly" })).status).toBe(201);
    expect((await asBob("/repos", { owner: "bobonly", name: "bobonly/notes" })).status).toBe(201);
    const files = [{ path: "secret.md", content: Buffer.from("for bob").toString("base64") }];
    expect(
      (await asBob("/repos/bobonly/notes/-/commit", { branch: "main", message: "m", files })).status,
    ).toBe(201);
    expect((await quire(["clone", "bobonly/notes", "c"])).code).toBe(1);
    expectExit(await quire(["--as", "bob@example.com", "clone", "bobonly/notes", "c", "--json"]), 0);
    expect(await readFile(path.join(home.dir, "c", "secret.md"), "utf8")).toBe("for bob");
  });

  it("exits 1 with the server's reason for an identity it does not list", async () => {
    const run = await quire(["--as", "mallory@example.com", "orgs", "list"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("not one of DEV_IDENTITIES (alice@example.com, bob@example.com)");
  });
});
