import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.ts";
import { type CliResult, cliBin, expectExit, runQuire, tempHome } from "./support.ts";

/**
 * `quire login` against the test identity provider's code flow, the test playing the browser over
 * HTTP: it reads the URL the CLI prints, asks the provider's authorize endpoint, and follows the
 * redirect to the CLI's loopback server. Then refresh, `whoami`, `logout`.
 */

const CLIENT = "quire-cli-test";
const EMAIL = "cli-login@example.com";
let app: TestApp;
let home: Awaited<ReturnType<typeof tempHome>>;

beforeAll(async () => {
  await cliBin();
  // A web client too: the server then checks `aud`, and accepts the CLI's client beside it.
  app = await startTestApp({ SVC_CLI_CLIENT_ID: CLIENT, OIDC_CLIENT_ID: "quire-web-test" });
  home = await tempHome();
});
afterAll(async () => {
  await app?.close();
  await home?.remove();
});

const credentialsFile = () => path.join(home.dir, ".config", "quire", "credentials.json");
const stored = async () => JSON.parse(await readFile(credentialsFile(), "utf8"));

/**
 * Runs `quire login` and, once it prints the authorize URL, hands that URL to `browser`; answers
 * the CLI's result and what the browser got.
 */
async function login(browser: (url: URL) => Promise<Response>): Promise<{ cli: CliResult; page: Response }> {
  let page: Promise<Response> | undefined;
  const cli = await runQuire(["login", app.url, "--no-browser"], home.dir, {
    onStderr: (_chunk, all) => {
      const m = /^(http\S+\/authorize\?\S+)$/m.exec(all);
      if (m?.[1] && !page) page = browser(new URL(m[1]));
    },
  });
  if (!page) throw new Error(`the CLI printed no URL:\n${cli.stderr}`);
  return { cli, page: await page };
}

/** The provider's redirect back to the CLI (the browser's next hop). */
async function authorize(url: URL): Promise<URL> {
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status, await res.clone().text()).toBe(302);
  return new URL(res.headers.get("location") ?? "");
}

describe("quire login", { timeout: 60_000 }, () => {
  it("serves the provider and client at GET /auth/cli", async () => {
    const res = await fetch(`${app.url}/auth/cli`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      issuer: app.idp.issuer,
      client_id: CLIENT,
      scopes: ["openid", "email"],
    });
  });

  it("refuses an answer whose state is not its own, and keeps nothing", async () => {
    app.idp.signInAs(EMAIL);
    const { cli, page } = await login(async (url) => {
      const back = await authorize(url);
      back.searchParams.set("state", "forged-state");
      return fetch(back);
    });
    expect(page.status).toBe(400);
    expectExit(cli, 1);
    expect(cli.stderr).toContain("state");
    await expect(stat(credentialsFile())).rejects.toThrow();
  });

  it("a code bound to another PKCE challenge is refused by the provider at the token endpoint", async () => {
    const { cli } = await login(async (url) => {
      // An attacker's challenge in place of the CLI's: the CLI's verifier no longer matches it.
      url.searchParams.set("code_challenge", "x".repeat(43));
      return fetch(await authorize(url));
    });
    expectExit(cli, 1);
    expect(cli.stderr).toMatch(/identity provider refused: invalid_grant/);
    await expect(stat(credentialsFile())).rejects.toThrow();
  });

  it("signs in: S256, state and nonce sent; tokens kept per server with mode 0600", async () => {
    // An ID token that expires within the refresh margin, so the next command refreshes it.
    app.idp.signInAs(EMAIL, { expiresIn: 60 });
    const { cli, page } = await login(async (url) => {
      expect(url.searchParams.get("code_challenge_method")).toBe("S256");
      expect(url.searchParams.get("client_id")).toBe(CLIENT);
      expect(url.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      expect(url.searchParams.get("state")).toMatch(/^[\w-]{43}$/);
      expect(url.searchParams.get("nonce")).toMatch(/^[\w-]{43}$/);
      return fetch(url);
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Signed in");
    expectExit(cli, 0);
    expect(cli.stdout).toContain(`signed in to ${app.url} as ${EMAIL}`);
    expect((await stat(credentialsFile())).mode & 0o777).toBe(0o600);
    const file = await stored();
    expect(file.last_server).toBe(app.url);
    expect(file.servers[app.url]).toMatchObject({
      client_id: CLIENT,
      email: EMAIL,
      refresh_token: expect.any(String),
    });
  });

  it("refreshes the ID token with the refresh token before it expires, and the call succeeds", async () => {
    const before = (await stored()).servers[app.url];
    const tokenRequests = () => app.idp.requests.filter((r) => r.endpoint === "token");
    const calls = tokenRequests().length;
    // No QUIRE_SERVER, no token in the environment: the last login's server and its stored token.
    const r = expectExit(await runQuire(["orgs", "list", "--json"], home.dir), 0);
    expect(r.json()).toEqual([]);
    const refresh = tokenRequests().slice(calls);
    expect(refresh.map((q) => q.params["grant_type"])).toEqual(["refresh_token"]);
    const after = (await stored()).servers[app.url];
    expect(after.id_token).not.toBe(before.id_token);
    expect(after.expires_at).toBeGreaterThanOrEqual(before.expires_at);
    expect((await stat(credentialsFile())).mode & 0o777).toBe(0o600);
    const who = expectExit(await runQuire(["whoami", "--json"], home.dir), 0).json();
    expect(who).toMatchObject({ server: app.url, email: EMAIL });
  });

  it("QUIRE_TOKEN overrides the stored sign-in; its audience must be one of the server's clients", async () => {
    const stranger = await app.idp.token("someone-else@example.com", { audience: "another-app" });
    const refused = expectExit(
      await runQuire(["orgs", "list"], home.dir, { env: { QUIRE_TOKEN: stranger } }),
      1,
    );
    expect(refused.stderr).toContain("401");
    const other = await app.idp.token("someone-else@example.com", { audience: CLIENT });
    const r = expectExit(
      await runQuire(["orgs", "create", "clilogin", "--json"], home.dir, { env: { QUIRE_TOKEN: other } }),
      0,
    );
    expect(r.json()).toMatchObject({ created_by: "someone-else@example.com" });
  });

  it("logout forgets the sign-in; then commands need a server and a login again", async () => {
    expectExit(await runQuire(["logout"], home.dir), 0);
    await expect(stat(credentialsFile())).rejects.toThrow();
    const noServer = expectExit(await runQuire(["orgs", "list"], home.dir), 2);
    expect(noServer.stderr).toContain("quire login");
    const anonymous = expectExit(
      await runQuire(["orgs", "list"], home.dir, { env: { QUIRE_SERVER: app.url } }),
      1,
    );
    expect(anonymous.stderr).toContain("quire login");
    expectExit(await runQuire(["logout", app.url], home.dir), 1);
  });

  it("a config folder that already exists at 0777 is made 0700, the token file 0600", async () => {
    const dir = path.dirname(credentialsFile());
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o777);
    await writeFile(credentialsFile(), "{}", { mode: 0o666 });
    await chmod(credentialsFile(), 0o666);
    app.idp.signInAs(EMAIL);
    const { cli } = await login((url) => fetch(url));
    expectExit(cli, 0);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(credentialsFile())).mode & 0o777).toBe(0o600);
  });
});
