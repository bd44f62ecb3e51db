import type { BrowserContext, BrowserContextOptions } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { signedInContext, useBrowser, watchErrors } from "./browser.ts";

/** The web interface as a daily tool (issue 20): local times, narrow screens, keyboard, errors, links. */
const app = useFixture(startTestApp);
const chrome = useBrowser();
const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

async function pageAs(email: string, options: BrowserContextOptions = {}) {
  const context = await signedInContext(chrome.browser, app, email, options);
  contexts.push(context);
  return context.newPage();
}

describe("dates in the reader's time zone", () => {
  it("shows a commit's time in Tokyo time with the UTC value on hover", async () => {
    const repo = await world(app).repo();
    const sequence = await repo.commit("main", { "a.md": "a\n" });
    const page = await pageAs(repo.owner, { timezoneId: "Asia/Tokyo", locale: "en-US" });
    const errors = watchErrors(page);
    await page.goto(`/ui/repos/${repo.repo}/-/commit/${sequence}`);
    const time = page.locator("time").first();
    const iso = await time.getAttribute("datetime");
    const title = await time.getAttribute("title");
    expect(title).toBe(`${iso?.replace("T", " ").slice(0, 16)} UTC`);
    const tokyo = new Intl.DateTimeFormat("en-US", {
      timeZone: "Asia/Tokyo",
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      timeZoneName: "short",
    }).format(new Date(String(iso)));
    await expect.poll(() => time.textContent()).toBe(tokyo);
    expect(errors).toEqual([]);
  });
});
