import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectStatus, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

/** Issues in the browser (docs/issues.md): open, comment, close, reopen, filters and `#n` links. */
const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

describe("issues on the web", () => {
  it("opens, comments, closes and reopens; filters; links #n both ways", async () => {
    const repo = await world(app).repo({ people: { writer: "writer", reader: "reader" } });
    await repo.commit("main", { "a.md": "a\n" });
    const base = `/ui/repos/${repo.repo}/-`;
    const page = await pageAs(repo.people.writer);
    const errors = watchErrors(page);

    // Open from the list: the tab is there, the form keeps what was typed when refused.
    await page.goto(`/ui/repos/${repo.repo}/-/tree`);
    await page.getByRole("navigation", { name: "Repository" }).getByRole("link", { name: "Issues" }).click();
    expect(new URL(page.url()).pathname).toBe(`${base}/issues`);
    await page.locator("#issue-title").fill("x".repeat(10));
    await page.locator("#issue-labels").fill("bad,, label\u0007");
    await page.locator("#issue-body").fill("kept text");
    const refused = page.waitForResponse((r) => r.request().method() === "POST");
    await page.locator("#open-issue button[type=submit]").click();
    expect((await refused).status()).toBe(400);
    await expect.poll(() => page.locator("#form-refused").count()).toBe(1);
    expect(await page.locator("#issue-body").inputValue()).toBe("kept text");

    await page.locator("#issue-title").fill("Intro is unclear");
    await page.locator("#issue-labels").fill("docs, bug");
    await page.locator("#issue-assignees").fill(repo.people.writer);
    await page.locator("#issue-body").fill("The **intro** needs work.\n\n`#5` is code, see #2.");
    await page.locator("#open-issue button[type=submit]").click();
    await page.waitForURL(`**${base}/issues/1`);
    expect(await page.locator("h1").textContent()).toContain("Intro is unclear");
    expect(await page.locator("#issue-body strong").textContent()).toBe("intro");
    // `#2` in the body links to item 2; `#5` in code does not.
    expect(
      await page.locator("#issue-body a.mention").evaluateAll((as) => as.map((a) => a.getAttribute("href"))),
    ).toEqual([`${base}/issues/2`]);

    // A blank comment (the browser's own check lifted) is refused, the text kept.
    await page
      .locator("#issue-comment-body")
      .evaluate((el: { removeAttribute(name: string): void }) => el.removeAttribute("required"));
    await page.locator("#issue-comment-body").fill("   ");
    const blank = page.waitForResponse((r) => r.request().method() === "POST");
    await page.locator("#issue-comment button[type=submit]").click();
    expect((await blank).status()).toBe(400);
    await expect.poll(() => page.locator("#form-refused").count()).toBe(1);
    expect(await page.locator("#issue-comment-body").inputValue()).toBe("   ");
    await page.goto(`${base}/issues/1`);

    // Comment, close with a reason, reopen.
    await page.locator("#issue-comment-body").fill("Same on the FAQ page, see #1.");
    await page.locator("#issue-comment button[type=submit]").click();
    await page.waitForURL(`**${base}/issues/1`);
    await expect.poll(() => page.locator("#issue-comments li").count()).toBe(1);
    await screenshot(page, "issue-desktop");
    await page.locator("#close-reason").selectOption("not_planned");
    await page.locator("#close-issue button[type=submit]").click();
    await expect.poll(() => page.locator("#issue-state").textContent()).toContain("closed (not planned)");
    await page.locator("#reopen-issue button[type=submit]").click();
    await expect.poll(() => page.locator("#issue-state").textContent()).toContain("open");

    // #2 is a proposal whose description mentions #1: its page links back, and the issue lists it.
    const branch = await repo.branch("fix-intro", {
      files: { "a.md": "b\n" },
      message: "Rewrite the intro (#1)",
    });
    const proposal = expectStatus(
      await api(repo.as("writer")).post("/repos/:repo*/-/proposals", {
        params: { repo: repo.repo },
        body: { branch: branch.name, title: "Fix the intro", description: "Fixes #1." },
      }),
      201,
    );
    expect(proposal.number).toBe(2);
    await page.goto(`${base}/issues/2`);
    expect(new URL(page.url()).pathname).toBe(`${base}/proposals/2`);
    expect(await page.locator(".description a.mention").getAttribute("href")).toBe(`${base}/issues/1`);
    await page.goto(`${base}/commit/${branch.head}`);
    await page.locator("a.mention", { hasText: "#1" }).click();
    await page.waitForURL(`**${base}/issues/1`);
    const mentioned = page.locator("#mentioned-in");
    expect(await mentioned.getByRole("link", { name: String(branch.head), exact: true }).count()).toBe(1);
    expect(await mentioned.getByRole("link", { name: "#2", exact: true }).getAttribute("href")).toBe(
      `${base}/issues/2`,
    );
    expect((await page.goto(`${base}/issues/99`))?.status()).toBe(404);

    // Filters: by label, by state; a reader sees no forms.
    expectStatus(
      await api(repo.as("writer")).post("/repos/:repo*/-/issues", {
        params: { repo: repo.repo },
        body: { title: "Typo", labels: ["typo"] },
      }),
      201,
    );
    await page.goto(`${base}/issues`);
    expect(await page.locator("#issues tbody tr").count()).toBe(2);
    await page.locator("#f-label").fill("docs");
    await page.locator("#issue-filters button[type=submit]").click();
    await page.waitForURL(/label=docs/);
    expect(await page.locator("#issues tbody tr").allTextContents()).toEqual([
      expect.stringContaining("Intro is unclear"),
    ]);
    await page.locator("#f-state").selectOption("closed");
    await page.locator("#issue-filters button[type=submit]").click();
    await page.waitForURL(/state=closed/);
    expect(await page.locator("#no-issues").count()).toBe(1);
    // The refused form (400) and the missing issue (404) are meant; nothing else may fail.
    expect(errors.filter((e) => !e.startsWith("Failed to load resource"))).toEqual([]);

    const reader = await pageAs(repo.people.reader, { viewport: { width: 390, height: 844 } });
    await reader.goto(`${base}/issues/1`);
    expect(await reader.locator("form[method=post]").count()).toBe(0);
    expect(await reader.locator("#issue-comments li").count()).toBe(1);
    const overflow = await reader.evaluate("document.documentElement.scrollWidth > window.innerWidth");
    expect(overflow).toBe(false);
    await screenshot(reader, "issue-390");
    await reader.goto(`${base}/issues`);
    expect(await reader.locator("#open-issue").count()).toBe(0);
    await screenshot(reader, "issues-390");
  });
});
