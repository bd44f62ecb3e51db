import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

/** Finding one's way (issue 20, section 2): the folder view, history with filters, compare. */
const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

let repo: RepoHandle;
const seq: Record<string, number> = {};
let base: string;

beforeAll(async () => {
  repo = await world(app).repo();
  base = `/ui/repos/${repo.repo}/-`;
  seq["layout"] = await repo.commit(
    "main",
    {
      "README.md": "# The handbook\n\nStart in [the guide](docs/guide/).\n",
      "a.txt": "x".repeat(2048),
      "docs/intro.md": "# Intro\n",
      "docs/guide/README.md": "# Guide\n\nThen read [the steps](./steps.md).\n",
      "docs/guide/steps.md": "# Steps\n\none\n",
      "old/gone.txt": "soon deleted\n",
      "src/app.ts": "export const a = 1;\n",
      "src/ReadMe.md": "# Sources\n",
    },
    "Lay out the handbook",
  );
  seq["intro"] = await repo.commit(
    "main",
    { "docs/intro.md": "# Intro\n\nEdited.\n", "old/gone.txt": null },
    "Edit the intro\n\nAnd drop old/.",
  );
  seq["app"] = await repo.commit("main", { "src/app.ts": "export const a = 2;\n" }, "Grow the app");
  const feature = await repo.branch("feature", {
    files: { "docs/guide/steps.md": "# Steps\n\none\ntwo\n" },
    message: "Add a step",
  });
  seq["step"] = feature.head;
  seq["new"] = await feature.commit({ "docs/new.md": "# New\n" }, "Add a new page");
});

/** The rows of the folder view: [name, last commit's sequence, size]. */
async function folderRows(page: Page): Promise<string[][]> {
  return page.locator("table.folder-view tbody tr").evaluateAll((rows) =>
    rows.map((r) => {
      const cells = [...r.querySelectorAll("td")];
      return [
        cells[0]?.textContent?.trim() ?? "",
        cells[1]?.querySelector("a")?.textContent ?? "",
        cells[3]?.textContent ?? "",
      ];
    }),
  );
}

async function historySequences(page: Page): Promise<number[]> {
  return page
    .locator("table.history tbody tr td:first-child")
    .evaluateAll((cells) => cells.map((c) => Number(c.textContent)));
}

/** Each file of a comparison as "path (status)", in the order shown. */
async function comparedFiles(page: Page): Promise<string[]> {
  const files = page.locator(".file-diff");
  const shown: string[] = [];
  for (let i = 0; i < (await files.count()); i++) {
    const file = files.nth(i);
    const status = await file.locator(".status").first().textContent();
    shown.push(`${await file.getAttribute("aria-label")} (${status})`);
  }
  return shown;
}

describe("the folder view", () => {
  it("lists folders first with their last commit and sizes, breadcrumbs, the README, and pages", async () => {
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    await page.goto(`${base}/tree`);
    // old/ had only a deleted file: it is no folder any more.
    expect(await folderRows(page)).toEqual([
      ["docs/", String(seq["intro"]), ""],
      ["src/", String(seq["app"]), ""],
      ["README.md", String(seq["layout"]), "51 B"],
      ["a.txt", String(seq["layout"]), "2.0 KiB"],
    ]);
    expect(await page.locator(".readme .markdown h1").textContent()).toBe("The handbook");
    expect(await page.locator(".readme .markdown a").getAttribute("href")).toBe(
      `${base}/tree/docs/guide?at=${seq["app"]}`,
    );
    expect(await page.locator("table.folder-view time").first().getAttribute("datetime")).toMatch(/Z$/);
    await screenshot(page, "tree-folder-desktop");

    await page.getByRole("link", { name: "docs/", exact: true }).click();
    expect(new URL(page.url()).pathname).toBe(`${base}/tree/docs`);
    // docs/intro.md was touched twice: the later commit is shown, with its message's first line.
    expect(await folderRows(page)).toEqual([
      ["guide/", String(seq["layout"]), ""],
      ["intro.md", String(seq["intro"]), "17 B"],
    ]);
    expect(await page.locator("tr", { hasText: "intro.md" }).locator(".last-commit").textContent()).toBe(
      `${seq["intro"]} Edit the intro`,
    );
    await page.getByRole("link", { name: "guide/", exact: true }).click();
    const crumbs = page.getByRole("navigation", { name: "Breadcrumbs" });
    expect(await crumbs.locator("li").allTextContents()).toEqual([
      "Orgs",
      repo.org,
      repo.repo,
      "docs",
      "guide",
    ]);
    expect(await page.locator(".readme .markdown h1").textContent()).toBe("Guide");
    await page.locator(".readme .markdown").getByRole("link", { name: "the steps" }).click();
    expect(new URL(page.url()).pathname).toBe(`${base}/file/docs/guide/steps.md`);
    expect(page.url()).toContain(`at=${seq["app"]}`);
    await page.goBack();
    await crumbs.getByRole("link", { name: "docs", exact: true }).click();
    expect(new URL(page.url()).pathname).toBe(`${base}/tree/docs`);

    // On the branch, at its head and at an older sequence: links keep the branch and the sequence.
    await page.goto(`${base}/tree/docs?branch=feature`);
    expect(await folderRows(page)).toEqual([
      ["guide/", String(seq["step"]), ""],
      ["intro.md", String(seq["intro"]), "17 B"],
      ["new.md", String(seq["new"]), "6 B"],
    ]);
    await page.goto(`${base}/tree/docs?branch=feature&at=${seq["step"]}`);
    expect((await folderRows(page)).map((r) => r[0])).toEqual(["guide/", "intro.md"]);
    expect(await page.getByRole("link", { name: "guide/" }).getAttribute("href")).toBe(
      `${base}/tree/docs/guide?branch=feature&at=${seq["step"]}`,
    );

    // Keyset pages: folders first across pages, then files.
    await page.goto(`${base}/tree?limit=3`);
    expect((await folderRows(page)).map((r) => r[0])).toEqual(["docs/", "src/", "README.md"]);
    await page.getByRole("link", { name: "Next page" }).click();
    expect((await folderRows(page)).map((r) => r[0])).toEqual(["a.txt"]);
    expect(await page.getByRole("link", { name: "Next page" }).count()).toBe(0);
    await page.goto(`${base}/tree?limit=1&after=docs/`);
    expect((await folderRows(page)).map((r) => r[0])).toEqual(["src/"]);

    // A README's name is matched in any case.
    await page.goto(`${base}/tree/src`);
    expect(await page.locator("#readme-h").textContent()).toBe("ReadMe.md");
    expect(await page.locator(".readme .markdown h1").textContent()).toBe("Sources");

    expect((await page.goto(`${base}/tree/no/such`))?.status()).toBe(404);
    expect((await page.goto(`${base}/tree/old`))?.status()).toBe(404);
    errors.splice(0); // the two refusals' own console lines

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/tree/docs`);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "tree-folder-390");
    expect(errors).toEqual([]);
  });
});

describe("the history", () => {
  it("filters by file, by folder and by branch, and pages with its filters", async () => {
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    await page.goto(`${base}/file/docs/intro.md`);
    await page.locator("#file-history-link").click();
    expect(await historySequences(page)).toEqual([seq["intro"], seq["layout"]]);
    expect(await page.getByLabel("File or folder").inputValue()).toBe("docs/intro.md");
    const row = page.locator("table.history tbody tr").first();
    expect(await row.locator("td").allTextContents()).toEqual(
      expect.arrayContaining(["Edit the intro", repo.owner, "main"]),
    );
    expect(await row.locator("time").count()).toBe(1);

    await page.getByLabel("File or folder").fill("src");
    await page.getByRole("button", { name: "Filter" }).click();
    expect(await historySequences(page)).toEqual([seq["app"], seq["layout"]]);

    await page.getByLabel("File or folder").fill("docs");
    await page.getByLabel("Branch", { exact: true }).fill("feature");
    await page.getByRole("button", { name: "Filter" }).click();
    expect(await historySequences(page)).toEqual([seq["new"], seq["step"], seq["intro"], seq["layout"]]);
    await page.goto(`${base}/history?branch=main`);
    expect(await historySequences(page)).toEqual([seq["app"], seq["intro"], seq["layout"]]);
    await page.goto(`${base}/history`);
    expect(await historySequences(page)).toEqual([
      seq["new"],
      seq["step"],
      seq["app"],
      seq["intro"],
      seq["layout"],
    ]);
    await screenshot(page, "tree-history-desktop");

    // Paging keeps the filters: fifty commits on a branch, the next page is the older ones of it.
    const many = await repo.branch("many");
    for (let i = 0; i < 5; i++) await many.commit({ [`many/${i}.md`]: `${i}\n` }, `Many ${i}`);
    await page.goto(`${base}/history?branch=many&path=many`);
    expect((await historySequences(page)).length).toBe(5);
    expect((await page.goto(`${base}/history?branch=nosuch`))?.status()).toBe(404);
    errors.splice(0); // the refusal's own console line
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/history?path=docs`);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "tree-history-390");
    expect(errors).toEqual([]);
  });
});

describe("compare", () => {
  it("compares two sequences and two branches, and refuses what names nothing with the form kept", async () => {
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    await page.goto(`${base}/history`);
    await page.locator("#compare-link").click();
    await page.getByLabel("From", { exact: true }).fill(String(seq["layout"]));
    await page.getByLabel("To", { exact: true }).fill(String(seq["app"]));
    await page.getByRole("button", { name: "Compare" }).click();
    expect(await page.locator("#compare-commits-note").textContent()).toBe(
      `2 commits from main at ${seq["layout"]} to main at ${seq["app"]}.`,
    );
    expect(await historySequences(page)).toEqual([seq["app"], seq["intro"]]);
    expect(await page.locator("#compare-files-note").textContent()).toBe("3 files changed.");
    expect(await comparedFiles(page)).toEqual([
      "docs/intro.md (modified)",
      "old/gone.txt (deleted)",
      "src/app.ts (modified)",
    ]);
    expect(
      await page
        .locator('.file-diff[aria-label="src/app.ts"]')
        .locator("tr.add td.code", { hasText: "export" })
        .allTextContents(),
    ).toEqual(["export const a = 2;"]);

    await page.goto(`${base}/compare?from=main&to=feature`);
    expect(await page.locator("#compare-commits-note").textContent()).toBe(
      `2 commits from main at ${seq["app"]} to feature at ${seq["new"]}.`,
    );
    expect(await comparedFiles(page)).toEqual(["docs/guide/steps.md (modified)", "docs/new.md (added)"]);
    await screenshot(page, "tree-compare-desktop");
    // Backwards, feature to main@layout: not one line (main's later commits are not on feature's).
    await page.goto(`${base}/compare?from=feature&to=main@${seq["layout"]}`);
    expect(await page.locator("#compare-commits-note").textContent()).toContain("only in feature");

    const unknown = await page.goto(`${base}/compare?from=nosuch&to=main`);
    expect(unknown?.status()).toBe(404);
    expect(await page.locator("#compare-error").textContent()).toContain("nosuch");
    expect(await page.getByLabel("From", { exact: true }).inputValue()).toBe("nosuch");
    expect(await page.getByLabel("To", { exact: true }).inputValue()).toBe("main");
    const beyond = await page.goto(`${base}/compare?from=main&to=feature@99999`);
    expect(beyond?.status()).toBe(400);
    expect(await page.getByLabel("To", { exact: true }).inputValue()).toBe("feature@99999");
    expect((await page.goto(`${base}/compare?from=main&to=a b`))?.status()).toBe(400);
    expect((await page.goto(`${base}/compare?from=main&to=99999`))?.status()).toBe(404);
    errors.splice(0); // the refusals' own console lines

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/compare?from=main&to=feature`);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(page, "tree-compare-390");
    expect(errors).toEqual([]);
  });
});
