import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

/** The paths of the search results, in order. */
const resultPaths = (page: Page) => page.locator(".search-results h3").allTextContents();

/** Nothing on the page scrolls it sideways at 390 px. */
async function fitsNarrowScreen(page: Page): Promise<void> {
  await page.setViewportSize({ width: 390, height: 800 });
  expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390);
}

describe("search of file contents", () => {
  it("searches from a repo page, at a sequence and on a branch, and refuses what it cannot search", async () => {
    const repo = await world(app).repo();
    const guide = "# Guide\n\nThe quick brown fox.\nNothing here.\nAnother Fox line.\n";
    const first = await repo.commit("main", {
      "docs/guide.txt": guide,
      "src/app.ts": "const zebra = 1;\n",
      "image.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0, 0x66, 0x6f, 0x78]),
    });
    const second = await repo.commit("main", { "later.md": "a giraffe arrived later\n", "src/app.ts": null });
    await repo.branch("feature", { files: { "notes/branch-only.md": "an okapi on the branch\n" } });
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);

    // The search box of a repo page searches the view it shows.
    await page.goto(`/ui/repos/${repo.repo}/-/tree`);
    await page.getByRole("searchbox", { name: "Search file contents" }).fill("fox");
    await page.getByRole("searchbox", { name: "Search file contents" }).press("Enter");
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/search`);
    expect(new URL(page.url()).searchParams.get("at")).toBe(String(second));
    expect(await resultPaths(page)).toEqual(["docs/guide.txt"]);
    const lines = page.locator(".search-lines tr");
    expect(await lines.locator("td.n").allTextContents()).toEqual(["3", "5"]);
    expect(await lines.locator("mark").allTextContents()).toEqual(["fox", "Fox"]);
    await screenshot(page, "search-results");
    await fitsNarrowScreen(page);
    await screenshot(page, "search-results-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    // A line's link lands on that line of the file at the same view.
    await page.getByRole("link", { name: "Line 5" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/file/docs/guide.txt`);
    expect(new URL(page.url()).hash).toBe("#L5");
    expect(await page.locator(":target").textContent()).toContain("Another Fox line.");

    // At an older sequence: what was there then, not what came later.
    const search = (q: string, view = "") =>
      page.goto(`/ui/repos/${repo.repo}/-/search?q=${encodeURIComponent(q)}${view}`);
    await search("zebra", `&at=${first}`);
    expect(await resultPaths(page)).toEqual(["src/app.ts"]);
    await search("zebra");
    expect(await resultPaths(page)).toEqual([]);
    await search("giraffe", `&at=${first}`);
    expect(await page.locator("#no-results").textContent()).toContain(`at sequence ${first}`);
    await search("giraffe");
    expect(await resultPaths(page)).toEqual(["later.md"]);

    // A change made on a branch is found on that branch only; the branch sees main's files too.
    await search("okapi");
    expect(await resultPaths(page)).toEqual([]);
    await search("okapi", "&branch=feature");
    expect(await resultPaths(page)).toEqual(["notes/branch-only.md"]);
    await search("brown fox", "&branch=feature");
    expect(await resultPaths(page)).toEqual(["docs/guide.txt"]);
    // From a page of the branch, the search box keeps the branch.
    await page.goto(`/ui/repos/${repo.repo}/-/tree?branch=feature`);
    await page.getByRole("searchbox", { name: "Search file contents" }).fill("okapi");
    await page.getByRole("button", { name: "Search", exact: true }).first().click();
    expect(await resultPaths(page)).toEqual(["notes/branch-only.md"]);

    // No match (and a binary file's bytes are never searched); LIKE's wildcards are literal.
    await search("nomatchxyz");
    expect(await page.locator("#no-results").count()).toBe(1);
    await search("fox%");
    expect(await page.locator("#no-results").count()).toBe(1);

    expect(errors).toEqual([]);

    // Too short and too long: 400 with the form holding what was typed.
    for (const term of ["ab", "x".repeat(201), "a.b"]) {
      const res = await search(term);
      expect(res?.status()).toBe(400);
      expect(await page.locator("#search-refused").count()).toBe(1);
      expect(await page.getByLabel("Search for").inputValue()).toBe(term);
    }
    await screenshot(page, "search-refused");
  });

  it("finds a file by path: t opens the finder and the list follows the typing", async () => {
    const repo = await world(app).repo();
    await repo.commit("main", {
      "README.md": "# Read me\n",
      "src/components/button.ts": "export {};\n",
      "src/components/menu.ts": "export {};\n",
      "src/lib/buttons/util.ts": "export {};\n",
      "old/button-gone.ts": "export {};\n",
    });
    await repo.commit("main", { "old/button-gone.ts": null });
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    await page.goto(`/ui/repos/${repo.repo}/-/tree`);

    // "t" typed in a field is text, not the shortcut.
    const box = page.getByRole("searchbox", { name: "Search file contents" });
    await box.press("t");
    expect(await box.inputValue()).toBe("t");
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/tree`);

    await box.blur();
    await page.keyboard.press("t");
    await page.waitForURL(/\/-\/find/);
    const field = page.getByRole("searchbox", { name: "Path" });
    await expect.poll(() => page.evaluate("document.activeElement?.id")).toBe("find-q");
    const found = page.locator(".found-paths a");
    await page.keyboard.type("button");
    // The file's name first, then a folder's, and never a deleted path.
    await expect
      .poll(() => found.allTextContents())
      .toEqual(["src/components/button.ts", "src/lib/buttons/util.ts"]);
    await expect.poll(() => new URL(page.url()).searchParams.get("q")).toBe("button");
    // Fuzzy: the letters in order.
    await field.fill("cmpmnu");
    await expect.poll(() => found.allTextContents()).toEqual(["src/components/menu.ts"]);
    await field.fill("zzzz");
    await expect.poll(() => page.locator("#no-paths").count()).toBe(1);
    await field.fill("readme");
    await expect.poll(() => found.allTextContents()).toEqual(["README.md"]);
    await screenshot(page, "search-finder");
    await fitsNarrowScreen(page);
    await screenshot(page, "search-finder-390");
    await found.first().click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/file/README.md`);

    // Without script it is a GET form: the server renders the same list.
    const direct = await page.goto(`/ui/repos/${repo.repo}/-/find?q=menu`);
    expect(direct?.status()).toBe(200);
    expect((await found.allTextContents())[0]).toBe("src/components/menu.ts");
    expect(errors).toEqual([]);
  });
});
