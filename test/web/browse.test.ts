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

describe("browsing a repo in the browser", () => {
  it("shows the tree and a file at an old sequence, reached from the history", async () => {
    const repo = await world(app).repo();
    const first = await repo.commit("main", {
      "guide.md": "# Guide\n\nFirst version.\n",
      "data.json": '{"a":1,"b":[1,2]}',
    });
    await repo.commit("main", { "guide.md": "# Guide\n\nSecond version.\n", "later.txt": "added later\n" });
    await repo.branch("drafts/one", { files: { "x.md": "x" } });

    context = await signedInContext(chrome.browser, app, repo.owner);
    const page = await context.newPage();
    const errors = watchErrors(page);

    await page.goto("/");
    await expect.poll(() => page.url()).toContain("/ui/");
    await page.getByRole("link", { name: repo.repo }).first().click();
    expect(await page.locator("h1").textContent()).toBe(repo.repo);
    expect(await page.getByRole("link", { name: "later.txt" }).count()).toBe(1);

    // Keyboard: the first Tab reaches the skip link; the picker's fields have labels.
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");
    expect(await page.getByLabel("Branch", { exact: true }).count()).toBe(1);
    expect(await page.getByLabel("At sequence", { exact: true }).count()).toBe(1);
    // Using the branch field offers the repo's branches, read from the API only then.
    await page.getByLabel("Branch", { exact: true }).focus();
    await expect
      .poll(() =>
        page.locator("#pick-branches option").evaluateAll((os) => os.map((o) => o.getAttribute("value"))),
      )
      .toEqual(expect.arrayContaining(["main", "drafts/one"]));
    expect(await page.getByRole("main").count()).toBe(1);

    await page.getByRole("link", { name: "History" }).click();
    await page.getByRole("link", { name: `Browse at ${first}` }).click();
    expect(await page.getByRole("link", { name: "later.txt" }).count()).toBe(0);
    expect(page.url()).toContain(`at=${first}`);

    await page.getByRole("link", { name: "guide.md" }).click();
    const markdown = page.locator(".markdown");
    expect(await markdown.locator("h1").textContent()).toBe("Guide");
    expect(await markdown.textContent()).toContain("First version.");
    expect(await page.locator("#history-h").textContent()).toBe("History");
    expect(await page.locator("table").last().locator("tbody tr").count()).toBe(2);

    await page.goto(`/ui/repos/${repo.repo}/-/file/data.json?at=${first}`);
    // JSON by its structure: keys, and values coloured by kind.
    const structure = page.locator(".structure");
    expect(await structure.locator(".hljs-attr").allTextContents()).toEqual(["a", "b"]);
    expect(await structure.locator(".hljs-number").allTextContents()).toEqual(["1", "1", "2"]);
    expect(errors).toEqual([]);
    await screenshot(page, "browse-old-sequence");
  });
});
