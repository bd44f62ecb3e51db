import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { type RepoHandle, world } from "../support/world.ts";
import { screenshot, useBrowser } from "./browser.ts";

// The test provider issues tokens for this audience (test/support/idp.ts).
const CLIENT_ID = "quire-test";
const CLIENT_SECRET = "web-test-secret";

let app: TestApp;
let repo: RepoHandle;
/** Another origin on this machine (same site, other port): the forger's page. */
let evil: http.Server;
let evilUrl: string;
const chrome = useBrowser();

beforeAll(async () => {
  app = await startTestApp({ OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET });
  app.idp.registerClient({
    id: CLIENT_ID,
    secret: CLIENT_SECRET,
    redirectUris: [`${app.url}/auth/callback`],
  });
  repo = await world(app).repo();
  await repo.branch("target", { files: { "t.md": "t\n" } });
  evil = http.createServer((_req, res) => {
    const action = `${app.url}/ui/repos/${repo.repo}/-/branch/target/merge`;
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>win a prize</title>
<form id="f" method="post" action="${action}"><input type="hidden" name="csrf_token" value="guessed"><button>Claim</button></form>`);
  });
  await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  if (evil) await new Promise((resolve) => evil.close(resolve));
  await app?.close();
});

describe("signing in to the web interface", () => {
  it("signs in through the identity provider, posts a form, refuses a forged post, signs out for good", async () => {
    app.idp.signInAs(repo.owner);
    const context = await chrome.browser.newContext({ baseURL: app.url });
    try {
      const page = await context.newPage();
      // An unauthenticated page request goes to the provider and comes back to where it was going.
      await page.goto(`/ui/repos/${repo.repo}/-/branch/target`);
      expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/branch/target`);
      expect(await page.locator(".who").textContent()).toBe(`Signed in as ${repo.owner}`);
      expect(app.idp.requests.some((r) => r.endpoint === "token")).toBe(true);
      const [session] = await context.cookies(app.url);
      expect(session?.httpOnly).toBe(true);
      expect(session?.sameSite).toBe("Lax");

      // A form post with the session cookie and its CSRF token works.
      await page.getByLabel("Comment").fill("Not yet");
      await page.getByLabel("Request changes").check();
      await page.getByRole("button", { name: "Submit review" }).click();
      expect(await page.locator(".review").textContent()).toContain(`rejected by ${repo.owner}`);

      // A page of another origin posting to the merge form is refused, and nothing is merged.
      await page.goto(evilUrl);
      const [forged] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith("/merge")),
        page.getByRole("button", { name: "Claim" }).click(),
      ]);
      expect(forged.status()).toBe(403);
      // The browser asked for HTML, so the refusal is a page of the site naming the code.
      expect(forged.headers()["content-type"]).toBe("text/html; charset=utf-8");
      expect(await forged.text()).toContain("FORBIDDEN");
      const target = await api(repo.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: repo.repo, branch: "target" },
      });
      expect(okBody(target).status).toBe("active");

      // Sign out; the same cookie replayed afterwards is refused.
      await page.goto("/ui/");
      await page.getByRole("button", { name: "Sign out" }).click();
      expect(await page.locator("h1").textContent()).toBe("Signed out");
      const replay = await fetch(`${app.url}/ui/`, {
        headers: { cookie: `${session?.name}=${session?.value}`, accept: "text/html" },
        redirect: "manual",
      });
      expect(replay.status).toBe(302);
      expect(replay.headers.get("location")).toMatch(/^\/auth\/login\?return_to=/);
      const apiReply = await fetch(`${app.url}/orgs`, {
        headers: { cookie: `${session?.name}=${session?.value}` },
      });
      expect(apiReply.status).toBe(401);
      await screenshot(page, "signed-out");
    } finally {
      await context.close();
    }
  });
});
