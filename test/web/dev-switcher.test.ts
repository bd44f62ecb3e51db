import { afterAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { screenshot, useBrowser, watchErrors } from "./browser.ts";

const ALICE = "alice@example.com";
const BOB = "bob@example.com";

const app = useFixture(() => startTestApp({ DEV_IDENTITIES: `${ALICE},${BOB}` }));
const chrome = useBrowser();

describe("the development identity switcher in a real browser", () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it("switches who the pages act as, keeps it across pages, and runs clean under the CSP", async () => {
    const context = await chrome.browser.newContext({ baseURL: app.url });
    closing.push(() => context.close());
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto("/ui/");
    await expect(page.locator("header.site .who").textContent()).resolves.toBe(`Signed in as ${ALICE}`);

    await page.getByLabel("Act as").selectOption(BOB);
    await page.getByRole("button", { name: "Switch" }).click();
    await page.waitForURL("**/ui/");
    await expect(page.locator("header.site .who").textContent()).resolves.toBe(`Signed in as ${BOB}`);
    await expect(page.getByLabel("Act as").inputValue()).resolves.toBe(BOB);

    // What bob creates is bob's: the cookie applies to every request of this browser.
    const created = await page.evaluate(async () => {
      const res = await fetch("/orgs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "bobs-own" }),
      });
      return res.json();
    });
    expect(created).toMatchObject({ created_by: BOB });
    await page.goto("/ui/orgs/bobs-own");
    await expect(page.locator("header.site .who").textContent()).resolves.toBe(`Signed in as ${BOB}`);
    await screenshot(page, "dev-switcher-bob");
    expect(errors).toEqual([]);
  });
});
