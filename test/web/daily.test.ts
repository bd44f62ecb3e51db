import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

/** The web interface as a daily tool (issue 20): local times, errors, links (narrow screens and the keyboard: tour.ts). */
const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

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

describe("refusal pages inside a repo", () => {
  it("keep the repo's breadcrumb and link back to the referring page and the repo", async () => {
    const repo = await world(app).repo({ people: { reader: "reader" } });
    await repo.commit("main", { "a.md": "a\n" });
    const page = await pageAs(repo.people.reader);
    const tree = `/ui/repos/${repo.repo}/-/tree`;
    const missing = await page.goto(`/ui/repos/${repo.repo}/-/file/missing.md`, { referer: app.url + tree });
    expect(missing?.status()).toBe(404);
    const crumbs = page.getByRole("navigation", { name: "Breadcrumbs" });
    expect(await crumbs.getByRole("link", { name: repo.repo }).getAttribute("href")).toBe(
      `/ui/repos/${repo.repo}`,
    );
    expect(await page.locator("#back-link").getAttribute("href")).toBe(tree);
    await page.locator("#repo-link").click();
    expect(new URL(page.url()).pathname).toBe(tree);

    const refused = await page.goto(`/ui/repos/${repo.repo}/-/members`);
    expect(refused?.status()).toBe(403);
    expect(await crumbs.getByRole("link", { name: repo.repo }).count()).toBe(1);
    expect(await page.locator("#repo-link").textContent()).toBe(`Back to ${repo.repo}`);
  });
});

/** A 1×1 PNG, so the page can show that an image in Markdown is drawn, not only linked. */
const ONE_PIXEL_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

describe("relative links in rendered Markdown", () => {
  it("keep the branch and sequence being read, and never leave the repo", async () => {
    const repo = await world(app).repo();
    const guide = [
      "[other](./other.md) [top](../top.md#usage) [out](../../x.md) [dir](./)",
      "[web](https://example.com/a) [here](#here) ![pic](img/p.png)",
    ].join("\n\n");
    const b = await repo.branch("b", {
      files: {
        "docs/guide.md": guide,
        "docs/other.md": "# Old other\n",
        "top.md": "# Top\n",
        "docs/img/p.png": ONE_PIXEL_PNG,
      },
    });
    const at = b.head;
    await b.commit({ "docs/other.md": "# New other\n" });
    const base = `/ui/repos/${repo.repo}/-`;
    const page = await pageAs(repo.owner);
    await page.goto(`${base}/file/docs/guide.md?branch=b&at=${at}`);
    const md = page.locator(".markdown");
    const href = (name: string) => md.getByText(name, { exact: true }).getAttribute("href");
    expect(await href("other")).toBe(`${base}/file/docs/other.md?branch=b&at=${at}`);
    expect(await href("top")).toBe(`${base}/file/top.md?branch=b&at=${at}#usage`);
    expect(await href("out")).toBeNull();
    expect(await href("dir")).toBe(`${base}/tree/docs?branch=b&at=${at}`);
    expect(await href("web")).toBe("https://example.com/a");
    expect(await href("here")).toBe("#here");
    expect(await md.locator("img").getAttribute("src")).toBe(`${base}/raw/docs/img/p.png?branch=b&at=${at}`);
    // The raw route answers a download, which an <img> still shows: the picture is drawn.
    await expect
      .poll(() => md.locator("img").evaluate((img: { naturalWidth: number }) => img.naturalWidth))
      .toBe(1);
    await md.getByText("other", { exact: true }).click();
    expect(await page.locator(".markdown h1").textContent()).toBe("Old other");
  });
});
