import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { policies } from "../support/policies.ts";
import { expectStatus, installPolicies, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

/** The text of every file's diff on the page (not the comments under them). */
/** The diff's changed lines as `+text` and `-text` (the renderer draws the signs with CSS). */
async function diffText(page: Page): Promise<string[]> {
  const code = (kind: string) => page.locator(`.file-diff table.diff tr.${kind} td.code`).allTextContents();
  const [added, removed] = await Promise.all([code("add"), code("del")]);
  return [...removed.map((l) => `-${l}`), ...added.map((l) => `+${l}`)];
}

/** No horizontal scrolling of the page itself at the page's width. */
const scrollWidth = (page: Page) => page.evaluate("document.documentElement.scrollWidth");

describe("a proposal that stays readable after its merge", () => {
  it("numbers it, threads comments and replies, and keeps its diff, checks and reviews after main moves", async () => {
    const repo = await world(app).repo({ people: { reviewer: "writer", reader: "reader" } });
    await installPolicies(repo, { require_review: policies.require_review });
    await repo.commit("main", { "guide.md": "# Guide\n\nOld line.\n" });
    const feature = await repo.branch("feature", { files: { "guide.md": "# Guide\n\nFirst try.\n" } });
    const reviewer = repo.as("reviewer");
    // At the first head a failing check and a rejection; both are superseded at the merged head.
    await repo.client.post(`${repo.base}/check`, { branch: "feature", check_name: "lint", status: "failed" });
    await reviewer.post(`${repo.base}/review`, { branch: "feature", status: "rejected", body: "Not yet" });
    const head = await feature.commit({ "guide.md": "# Guide\n\nNew line.\n" });
    await repo.client.post(`${repo.base}/check`, { branch: "feature", check_name: "lint", status: "passed" });
    const proposal = expectStatus(
      await api(repo.client).post("/repos/:repo*/-/proposals", {
        params: { repo: repo.repo },
        body: { branch: "feature", title: "Say the new line" },
      }),
      201,
    );
    expect(proposal.number).toBe(1);
    const byNumber = `/ui/repos/${repo.repo}/-/proposals/1`;

    // Found in the list by its number; the UUID URL redirects to the number's.
    const owner = await pageAs(repo.owner);
    const errors = watchErrors(owner);
    await owner.goto(`/ui/repos/${repo.repo}/-/proposals`);
    await owner.getByRole("link", { name: "#1 Say the new line" }).click();
    expect(owner.url()).toMatch(/\/-\/proposals\/1$/);
    expect(await owner.locator("h1").textContent()).toBe("Say the new line #1");
    expect(await owner.title()).toContain("#1 Say the new line");
    await owner.goto(`/ui/repos/${repo.repo}/-/proposals/${proposal.id}`);
    expect(owner.url()).toMatch(/\/-\/proposals\/1$/);
    const before = await diffText(owner);
    expect(before.join("\n")).toContain("+New line.");
    expect(before.join("\n")).toContain("-Old line.");

    // A comment on the file, then a reply by someone else, threaded under it with author and time.
    await owner.getByLabel("Discuss guide.md").fill("Why <new>?");
    await owner.getByRole("button", { name: "Comment", exact: true }).click();
    expect(owner.url()).toMatch(/\/-\/proposals\/1#comment-[0-9a-f-]{36}$/);
    const first = owner.locator(".file-diff .thread > li.comment");
    expect(await first.locator(".comment-body").first().textContent()).toBe("Why <new>?");
    expect(await first.locator(".comment-author").first().textContent()).toBe(repo.owner);
    expect(await first.locator(".comment-meta time").first().getAttribute("datetime")).toMatch(/^\d{4}-/);

    const other = await pageAs(repo.people.reviewer);
    await other.goto(byNumber);
    await other.locator(".file-diff details.reply summary").first().click();
    await other.getByLabel(`Reply to ${repo.owner}`).fill("Because it is clearer.");
    await other.getByRole("button", { name: "Reply", exact: true }).first().click();
    const reply = other.locator(".file-diff li.comment ol.replies > li.comment");
    expect(await reply.locator(".comment-body").textContent()).toBe("Because it is clearer.");
    expect(await reply.locator(".comment-author").textContent()).toBe(repo.people.reviewer);
    expect(await reply.locator("time").count()).toBe(1);

    // A reply to a comment that is not there is refused (400) with the page and the text kept.
    await other.locator(".file-diff details.reply summary").first().click();
    await other
      .locator('.file-diff input[name="reply_to"]')
      .first()
      .evaluate((el) => {
        (el as unknown as { value: string }).value = "00000000-0000-4000-8000-000000000000";
      });
    await other.getByLabel(`Reply to ${repo.owner}`).fill("Lost <words>?");
    const refused = other.waitForResponse((r) => r.url().endsWith("/comment"));
    await other.getByRole("button", { name: "Reply", exact: true }).first().click();
    expect((await refused).status()).toBe(400);
    expect(await other.locator("#comment-refused").textContent()).toContain("reply_to");
    expect(await other.locator("#comment-draft").inputValue()).toBe("Lost <words>?");
    await screenshot(other, "proposal-reply-refused");

    // A reader sees the thread but is offered no form to comment or reply.
    const reader = await pageAs(repo.people.reader);
    await reader.goto(byNumber);
    expect(await reader.locator(".file-diff li.comment").count()).toBe(2);
    expect(await reader.locator(".comment-form, details.reply").count()).toBe(0);

    // Approved by the other identity, merged by the owner.
    await other.goto(byNumber);
    await other.getByLabel("Approve").check();
    await other.getByRole("button", { name: "Submit review" }).click();
    await owner.goto(byNumber);
    await owner.getByRole("button", { name: "Merge into main" }).click();
    expect(owner.url()).toMatch(/\/-\/proposals\/1$/);
    expect(await owner.locator(".state").textContent()).toBe("merged");
    const mainHead = async () =>
      okBody(
        await api(repo.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: repo.repo, branch: "main" },
        }),
      ).head_sequence;
    const merged = await mainHead();

    // Main moves on, the same file included; the merged proposal, reopened, has not changed.
    await repo.commit("main", { "guide.md": "# Guide\n\nA later line.\n", "later.md": "later\n" });
    expect(await mainHead()).toBeGreaterThan(merged);
    const later = await pageAs(repo.owner, { viewport: { width: 1280, height: 900 } });
    await later.goto(byNumber);
    expect(await diffText(later)).toEqual(before);
    const mergedAt = later.locator("#merged-at");
    expect(await mergedAt.textContent()).toContain(`Merged at sequence ${merged} by ${repo.owner}`);
    expect(await mergedAt.getByRole("link", { name: String(merged) }).getAttribute("href")).toBe(
      `/ui/repos/${repo.repo}/-/commit/${merged}`,
    );
    const checks = later.locator(".check-run");
    expect(await checks.count()).toBe(1);
    expect(await checks.textContent()).toContain("passed");
    expect(await checks.textContent()).toContain(String(head));
    const reviews = later.locator(".review");
    expect(await reviews.count()).toBe(1);
    expect(await reviews.textContent()).toContain(`approved by ${repo.people.reviewer}`);
    expect(await later.locator(".file-diff li.comment").count()).toBe(2);
    expect(await later.locator(".comment-form, #review-form, #merge-button").count()).toBe(0);
    await screenshot(later, "proposal-merged-later");
    const phone = await pageAs(repo.owner, { viewport: { width: 390, height: 844 } });
    await phone.goto(byNumber);
    expect(await scrollWidth(phone)).toBeLessThanOrEqual(390);
    await screenshot(phone, "proposal-merged-later-390");

    // The merge commit's page, and the merged branch's page linking back to its proposal.
    await later.locator("#merged-at a").click();
    expect(later.url()).toMatch(new RegExp(`/-/commit/${merged}$`));
    await later.goto(`/ui/repos/${repo.repo}/-/branch/feature`);
    expect(await later.locator("#branch-proposal a").getAttribute("href")).toBe(byNumber);
    expect(await diffText(later)).toEqual(before);
    expect(errors).toEqual([]);
  });
});

describe("a proposal closed with its abandoned branch", () => {
  it("keeps its page with the branch's diff against its base, and offers no forms", async () => {
    const repo = await world(app).repo();
    await repo.commit("main", { "a.md": "one\n" });
    await repo.branch("dropped", { files: { "a.md": "two\n" } });
    const proposal = expectStatus(
      await api(repo.client).post("/repos/:repo*/-/proposals", {
        params: { repo: repo.repo },
        body: { branch: "dropped", title: "Not this way" },
      }),
      201,
    );
    expectStatus(await repo.client.delete(`${repo.base}/branch/dropped`), 204);
    await repo.commit("main", { "a.md": "three\n" });
    const page = await pageAs(repo.owner);
    await page.goto(`/ui/repos/${repo.repo}/-/proposals/${proposal.number}`);
    expect(await page.locator(".state").textContent()).toBe("closed");
    expect(await page.locator("#branch-closed").textContent()).toContain("abandoned");
    expect((await diffText(page)).join("\n")).toMatch(/-one[\s\S]*\+two/);
    expect(await page.locator("#merged-at, .comment-form, #review-form, #merge-button").count()).toBe(0);
  });
});

describe("releases", () => {
  it("show their notes rendered at the release's sequence and offer its archive", async () => {
    const repo = await world(app).repo();
    const first = await repo.commit("main", { "guide.md": "# Guide\n" });
    await repo.commit("main", { "guide.md": "# Guide, changed\n" });
    expectStatus(
      await repo.client.post(`${repo.base}/releases`, {
        name: "v1",
        sequence: first,
        notes: "## What is new\n\nRead [the guide](guide.md). <script>x</script>",
      }),
      201,
    );
    const page = await pageAs(repo.owner);
    const errors = watchErrors(page);
    await page.goto(`/ui/repos/${repo.repo}/-/releases`);
    const notes = page.locator("#release-v1 .release-notes");
    expect(await notes.locator("h2").textContent()).toBe("What is new");
    expect(await notes.textContent()).toContain("<script>x</script>");
    expect(await notes.getByRole("link", { name: "the guide" }).getAttribute("href")).toBe(
      `/ui/repos/${repo.repo}/-/file/guide.md?at=${first}`,
    );
    const download = page.locator("#release-v1 a.archive");
    const archive = await page.request.get((await download.getAttribute("href")) ?? "");
    expect(archive.status()).toBe(200);
    expect(archive.headers()["content-type"]).toBe("application/gzip");
    expect([...(await archive.body()).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    await screenshot(page, "proposal-releases");
    const phone = await pageAs(repo.owner, { viewport: { width: 390, height: 844 } });
    await phone.goto(`/ui/repos/${repo.repo}/-/releases`);
    expect(await scrollWidth(phone)).toBeLessThanOrEqual(390);
    await screenshot(phone, "proposal-releases-390");
    expect(errors).toEqual([]);
  });
});
