import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.ts";
import { HOSTILE_RETURN_TO } from "../support/return-to-corpus.ts";
import { useBrowser } from "../web/browser.ts";

/**
 * The open-redirect corpus driven through the whole sign-in round trip in Chromium: /auth/login
 * with the hostile `return_to`, the provider, /auth/callback, and wherever its `Location` leads.
 * The browser must end on this service, having asked no other host for anything.
 */

const CLIENT_ID = "quire-test";
const CLIENT_SECRET = "return-to-secret";

let app: TestApp;
const chrome = useBrowser();

beforeAll(async () => {
  app = await startTestApp({ OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET });
  app.idp.registerClient({
    id: CLIENT_ID,
    secret: CLIENT_SECRET,
    redirectUris: [`${app.url}/auth/callback`],
  });
  app.idp.signInAs("traveller@example.com");
});
afterAll(async () => {
  await app?.close();
});

describe("return_to in a real browser", () => {
  it("brings Chromium back to this service for every hostile value", { timeout: 120_000 }, async () => {
    const allowed = new Set([new URL(app.url).origin, new URL(app.idp.issuer).origin]);
    const context = await chrome.browser.newContext();
    const offSite: string[] = [];
    // Every request, redirects followed included (a route handler would not see those).
    context.on("request", (request) => {
      if (!allowed.has(new URL(request.url()).origin)) offSite.push(request.url());
    });
    const landed: Record<string, string> = {};
    try {
      const page = await context.newPage();
      for (const value of HOSTILE_RETURN_TO) {
        const before = offSite.length;
        // Off this machine's closed network, a page of another host fails to load: that failure
        // is what the assertions below report, by the host asked for.
        await page.goto(`${app.url}/auth/login?${new URLSearchParams({ return_to: value })}`).catch(() => {});
        landed[value] = page.url();
        expect(offSite.slice(before), JSON.stringify(value)).toEqual([]);
        expect(new URL(page.url()).origin, JSON.stringify(value)).toBe(new URL(app.url).origin);
      }
    } finally {
      await context.close();
    }
    // The audit's value lands on the start page.
    expect(new URL(landed["/.//evil.example"] ?? "").pathname).toBe("/ui/");
  });

  it("still returns to a plain path with its query", async () => {
    const context = await chrome.browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${app.url}/auth/login?${new URLSearchParams({ return_to: "/ui/?x=1" })}`);
      expect(page.url()).toBe(`${app.url}/ui/?x=1`);
    } finally {
      await context.close();
    }
  });
});
