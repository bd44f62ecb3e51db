import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

/**
 * The "changed paths" table of JSON and YAML files above their text diff, in Chromium, on the
 * commit, branch and compare pages (functions/web/pages/changed-paths.ts; docs/web.md, "Code and diffs").
 */
const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

const CONFIG = "# limits of the repo\nlimits:\n  max_files: 10\nowners:\n  - name: ann\n";
const EDITED = `${CONFIG.replace("max_files: 10", "max_files: 20")}  - name: cy\n`;
const LONG = "x".repeat(700);

let repo: RepoHandle<never>;
let commit: number;
beforeAll(async () => {
  repo = await world(app).repo();
  await repo.commit("main", {
    "config.yaml": CONFIG,
    "package.json": '{"version": "1.0.0", "notes": "short"}\n',
    "style.json": '{"a": 1, "b": 2}\n',
    "readme.md": "hello\n",
  });
  await repo.branch("edit");
  commit = await repo.commit("edit", {
    "config.yaml": EDITED,
    "package.json": `{"version": "1.1.0", "notes": "${LONG}"}\n`,
    "style.json": '{\n  "b": 2,\n  "a": 1\n}\n',
    "readme.md": "hello, world\n",
  });
});

/** The rows of the changed-paths table in the section of one file, cell texts trimmed. */
function tableOf(page: Page, file: string) {
  return page
    .locator(`section.file-diff[aria-label="${file}"] table.changed-paths tbody tr`)
    .evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent?.trim())),
    );
}

async function expectTables(page: Page) {
  expect(await tableOf(page, "config.yaml")).toEqual([
    ["limits.max_files", "changed", "10", "20"],
    ['owners[name="cy"]', "added", "", '{"name":"cy"}'],
  ]);
  expect(await tableOf(page, "package.json")).toEqual([
    ["version", "changed", '"1.0.0"', '"1.1.0"'],
    ["notes", "changed", '"short"', "long value"],
  ]);
  const caption = page.locator('section.file-diff[aria-label="config.yaml"] table.changed-paths caption');
  expect(await caption.textContent()).toBe("Changed paths (2 paths)");
  // The table comes before the text diff, which stays.
  const order = await page
    .locator('section.file-diff[aria-label="config.yaml"]')
    .evaluate((s) => [...s.querySelectorAll("table")].map((t) => t.className));
  expect(order).toEqual(["changed-paths", "lines diff unified"]);
  expect(
    await page.locator('section.file-diff[aria-label="style.json"] .changed-paths-none').textContent(),
  ).toContain("formatting, comments or key order only");
  expect(await page.locator('section.file-diff[aria-label="readme.md"] table.changed-paths').count()).toBe(0);
}

describe("changed paths of JSON and YAML files", () => {
  it("shows a table above the text diff on the commit, branch and compare pages, also at 390 px", async () => {
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    for (const [name, url] of [
      ["commit", `/ui/repos/${repo.repo}/-/commit/${commit}`],
      ["branch", `/ui/repos/${repo.repo}/-/branch/edit`],
      ["compare", `/ui/repos/${repo.repo}/-/compare?from=main&to=edit`],
    ] as const) {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(url);
      await expectTables(page);
      if (name === "commit") await screenshot(page, "changed-paths-desktop");
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
      if (name === "commit") await screenshot(page, "changed-paths-390");
    }
    expect(errors).toEqual([]);
  });
});
