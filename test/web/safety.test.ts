import type { BrowserContext } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { screenshot, signedInContext, useBrowser, watchErrors } from "./browser.ts";

const app = useFixture(startTestApp);
const chrome = useBrowser();
let context: BrowserContext | undefined;
afterEach(async () => {
  await context?.close();
  context = undefined;
});

const HOSTILE_NAME = "<script>alert(1)</script>.md";
const HOSTILE_TEXT = [
  "# Title <img src=x onerror=alert(2)>",
  "",
  "<script>alert(3)</script>",
  "",
  '[click](javascript:alert(4)) and <a href="javascript:alert(5)">raw</a>',
  "",
].join("\n");

describe("pages render hostile content inert", () => {
  it("escapes names and content, renders no HTML from Markdown, and runs no inline script", async () => {
    const repo = await world(app).repo();
    await repo.commit(
      "main",
      { [HOSTILE_NAME]: HOSTILE_TEXT, "page.html": "<script>alert(6)</script>" },
      "<b>msg</b>",
    );

    context = await signedInContext(chrome.browser, app, repo.owner);
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on("dialog", async (d) => {
      dialogs.push(d.message());
      await d.dismiss();
    });
    const errors = watchErrors(page);

    await page.goto(`/ui/repos/${repo.repo}/-/tree`);
    // The name holds a "/": a folder "<script>alert(1)<" holding "script>.md", both shown as text.
    const [folder, file] = [
      HOSTILE_NAME.slice(0, HOSTILE_NAME.indexOf("/")),
      HOSTILE_NAME.slice(HOSTILE_NAME.indexOf("/") + 1),
    ];
    const folderLink = page.getByRole("link", { name: `${folder}/`, exact: true });
    expect(await folderLink.count()).toBe(1);
    await folderLink.click();
    const link = page.getByRole("link", { name: file, exact: true });
    expect(await link.count()).toBe(1);
    await link.click();
    expect(await page.locator("main > h1").textContent()).toBe(HOSTILE_NAME);

    const md = page.locator(".markdown");
    // The Markdown's raw HTML is text: no script, image or javascript: link became an element.
    expect(await md.locator("script, img, a[href^='javascript']").count()).toBe(0);
    expect(await md.locator("h1").textContent()).toBe("Title <img src=x onerror=alert(2)>");
    expect(await md.textContent()).toContain("<script>alert(3)</script>");
    // The only script element is the service's own static file.
    expect(await page.locator("script:not([src^='/ui/static/'])").count()).toBe(0);

    await page.goto(`/ui/repos/${repo.repo}/-/history`);
    expect(await page.getByRole("cell", { name: "<b>msg</b>" }).count()).toBe(1);

    // A repo's HTML file is a download, never a page of this origin.
    const raw = await page.request.get(`/ui/repos/${repo.repo}/-/raw/page.html`);
    expect(raw.headers()["content-type"]).toBe("application/octet-stream");
    expect(raw.headers()["content-disposition"]).toMatch(/^attachment;/);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    await screenshot(page, "hostile-content");
  });

  it("sends a strict Content-Security-Policy the browser enforces", async () => {
    const repo = await world(app).repo();
    context = await signedInContext(chrome.browser, app, repo.owner);
    const page = await context.newPage();
    const res = await page.goto(`/ui/repos/${repo.repo}/-/tree`);
    const csp = res?.headers()["content-security-policy"] ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res?.headers()["content-type"]).toBe("text/html; charset=utf-8");

    // An inline script injected into the page is blocked by the policy, not run.
    const violations: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") violations.push(m.text());
    });
    // Page code runs in the browser (strings, as this project's TypeScript has no DOM types).
    await page.evaluate(
      "const s = document.createElement('script'); s.textContent = \"document.body.dataset.ran = 'yes'\"; document.body.append(s);",
    );
    expect(await page.evaluate("document.body.dataset.ran ?? 'no'")).toBe("no");
    expect(violations.join("\n")).toContain("Content Security Policy");

    // Every resource the page loaded is this origin's own.
    const origins = await page.evaluate<string[]>(
      "performance.getEntriesByType('resource').map((e) => new URL(e.name).origin)",
    );
    expect(new Set(origins)).toEqual(new Set([new URL(app.url).origin]));
    await screenshot(page, "csp");
  });
});
