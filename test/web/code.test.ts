import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

/** Reading code and diffs as on a forge (issue 20, section 3; docs/web.md, "Code and diffs"). */
const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

const APP_TS = `/* The app:
   a comment over two lines */
export function greet(name: string): string {
  const greeting = "hello";
  return \`\${greeting}, \${name}\`;
}
`;
const CONFIG_YAML = "service:\n  name: quire\n  ports: [80, 443]\nenabled: true\n";
const BIG = Array.from({ length: 2_000 }, (_, i) => `big line ${i}`).join("\n");

let repo: RepoHandle<never>;
let first: number;
let second: number;
beforeAll(async () => {
  repo = await world(app).repo();
  first = await repo.commit("main", {
    "src/app.ts": APP_TS,
    "config.yaml": CONFIG_YAML,
    "old.txt": "one\ntwo\n",
    "page.html": "<script>alert(1)</script>\n",
    "logo.bin": Buffer.from([0, 1, 2, 3]),
  });
  second = await repo.commit("main", {
    "src/app.ts": APP_TS.replace('"hello"', '"hi"'),
    "notes.py": "def f():\n    return 1\n# done\n",
    "old.txt": null,
    "logo.bin": Buffer.from([0, 1, 2, 3, 4, 5]),
    "big.txt": BIG,
  });
});

/** The row numbers marked as selected in a file's lines. */
const selected = (page: Page) =>
  page.locator("table.lines tr.selected").evaluateAll((rows) => rows.map((r) => r.id));

describe("a file page", () => {
  it("highlights code, selects lines and ranges, shows raw text safely, and YAML by structure", async () => {
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    const fileUrl = `/ui/repos/${repo.repo}/-/file/src/app.ts?at=${first}`;
    await page.goto(fileUrl);
    expect(await page.locator("#L4 .hljs-keyword").first().textContent()).toBe("const");
    // A comment over two lines is coloured on both, each line's markup standing alone.
    expect(await page.locator("#L2 .hljs-comment").textContent()).toContain("a comment over two lines");

    await page.locator("#L3 td.n a").click();
    expect(new URL(page.url()).hash).toBe("#L3");
    expect(await selected(page)).toEqual(["L3"]);
    await page.locator("#L5 td.n a").click({ modifiers: ["Shift"] });
    expect(new URL(page.url()).hash).toBe("#L3-L5");
    expect(await selected(page)).toEqual(["L3", "L4", "L5"]);
    // A link to a range, as other pages make it, selects it when the page loads.
    await page.goto("about:blank");
    await page.goto(`${fileUrl}#L2-L4`);
    expect(await selected(page)).toEqual(["L2", "L3", "L4"]);
    await screenshot(page, "code-file-desktop");
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "code-file-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    // The raw view: the text as text, never run, whatever the file is.
    const rawHref = await page.getByRole("link", { name: "Raw", exact: true }).getAttribute("href");
    const raw = await page.request.get(String(rawHref));
    expect(raw.headers()["content-type"]).toBe("text/plain; charset=utf-8");
    expect(raw.headers()["x-content-type-options"]).toBe("nosniff");
    expect(raw.headers()["content-security-policy"]).toMatch(/^sandbox/);
    expect(await raw.text()).toBe(APP_TS);
    const html = await page.request.get(`/ui/repos/${repo.repo}/-/plain/page.html?at=${first}`);
    expect(html.headers()["content-type"]).toBe("text/plain; charset=utf-8");
    const binary = await page.request.get(`/ui/repos/${repo.repo}/-/plain/logo.bin?at=${first}`);
    expect(binary.status(), await binary.text()).toBe(200);
    expect(binary.headers()["content-disposition"]).toMatch(/^attachment/);
    expect(binary.headers()["content-type"]).toBe("application/octet-stream");

    // YAML by its structure, with the source a toggle away.
    await page.goto(`/ui/repos/${repo.repo}/-/file/config.yaml`);
    const structure = page.locator(".structure");
    expect(await structure.locator(".hljs-attr").allTextContents()).toEqual(
      expect.arrayContaining(["service", "name", "ports", "enabled"]),
    );
    expect(await structure.locator(".hljs-string").first().textContent()).toBe('"quire"');
    await page.getByRole("link", { name: "Source", exact: true }).click();
    expect(new URL(page.url()).searchParams.get("show")).toBe("source");
    expect(await page.locator(".structure").count()).toBe(0);
    expect(await page.locator("#L2 .hljs-attr").textContent()).toBe("name:");
    // A line of the folded source, linked from elsewhere, is shown.
    await page.goto(`/ui/repos/${repo.repo}/-/file/config.yaml#L3`);
    await expect.poll(() => page.locator("#L3").isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe("a commit's diff", () => {
  it("counts, labels and highlights each file, in unified and split views, large and binary without text", async () => {
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    await page.goto(`/ui/repos/${repo.repo}/-/commit/${second}`);
    const summary = page.locator("#diff-summary");
    expect(await summary.textContent()).toContain("5 files changed, +2004 −3");

    const list = page.locator("table.diff-files tbody tr");
    const listed = await list.evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent?.trim())),
    );
    expect(listed).toEqual(
      expect.arrayContaining([
        ["src/app.ts", "modified", "+1 −1"],
        ["notes.py", "added", "+3 −0"],
        ["old.txt", "deleted", "+0 −2"],
        ["logo.bin", "modified binary", "not counted"],
        ["big.txt", "added", "+2000 −0"],
      ]),
    );

    const app = page.getByRole("region", { name: "src/app.ts" });
    expect(await app.locator(".hljs-string").allTextContents()).toEqual(
      expect.arrayContaining(['"hello"', '"hi"']),
    );
    // Both sides' numbers: the removed line has its old number only, the added its new one.
    expect(await app.locator("tr.del td.n").allTextContents()).toEqual(["4", ""]);
    expect(await app.locator("tr.add td.n").allTextContents()).toEqual(["", "4"]);
    expect(
      await page.getByRole("region", { name: "notes.py" }).locator(".hljs-keyword").first().textContent(),
    ).toBe("def");

    const big = page.getByRole("region", { name: "big.txt" });
    expect(await big.textContent()).toContain("Large diff not shown");
    expect(await page.content()).not.toContain("big line 1999");
    expect(await page.getByRole("region", { name: "logo.bin" }).textContent()).toContain(
      "Binary file (4 bytes → 6 bytes), not shown.",
    );
    await screenshot(page, "code-commit-desktop");
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "code-commit-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole("link", { name: "Split" }).click();
    expect(new URL(page.url()).searchParams.get("view")).toBe("split");
    const row = page.getByRole("region", { name: "src/app.ts" }).locator("table.split tr:has(td.del)");
    expect(await row.locator("td").allTextContents()).toEqual([
      "4",
      '  const greeting = "hello";',
      "4",
      '  const greeting = "hi";',
    ]);
    await screenshot(page, "code-commit-split");
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "code-commit-split-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    await page
      .getByRole("region", { name: "big.txt" })
      .getByRole("link", { name: "Load this file's diff" })
      .click();
    // The click returns once the navigation commits; a 2,000-row page may still be parsing.
    await page.waitForLoadState("load");
    expect(new URL(page.url()).searchParams.get("file")).toBe("big.txt");
    expect(await page.locator("table.split td.add").count()).toBe(2000);
    expect(await page.locator(".file-diff").count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it("renders a branch's diff with the same renderer, split on request", async () => {
    const feature = await repo.branch("feature", { files: { "src/app.ts": APP_TS.replace("name", "who") } });
    const page = await pageAs(repo.owner, { colorScheme: "dark" });
    const errors = watchErrors(page);
    await page.goto(`/ui/repos/${repo.repo}/-/branch/${feature.name}`);
    const diff = page.getByRole("region", { name: "src/app.ts" });
    expect(await diff.locator(".status").textContent()).toBe("modified");
    expect(await diff.locator(".hljs-keyword").count()).toBeGreaterThan(0);
    await page.getByRole("link", { name: "Split" }).click();
    expect(new URL(page.url()).searchParams.get("view")).toBe("split");
    expect(await page.getByRole("region", { name: "src/app.ts" }).locator("table.split").count()).toBe(1);
    await screenshot(page, "code-branch-split-dark");
    expect(errors).toEqual([]);
  });
});
