import type { BrowserContext } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { policies } from "../support/policies.ts";
import { expectStatus, installPolicies, useFixture, world } from "../support/world.ts";
import { screenshot, signedInContext, useBrowser, watchErrors } from "./browser.ts";

const app = useFixture(startTestApp);
const chrome = useBrowser();
const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

async function contextAs(email: string) {
  const context = await signedInContext(chrome.browser, app, email);
  contexts.push(context);
  return context;
}

describe("reviewing and merging a proposal in the browser", () => {
  it("shows why a policy refuses the merge, then merges once a reviewer approves", async () => {
    const repo = await world(app).repo({ people: { reviewer: "writer" } });
    await installPolicies(repo, { require_review: policies.require_review });
    await repo.branch("feature", { files: { "notes.md": "# Notes\n\nA line to review.\n" } });
    const proposal = expectStatus(
      await api(repo.client).post("/repos/:repo*/-/proposals", {
        params: { repo: repo.repo },
        body: { branch: "feature", title: "Add the notes" },
      }),
      201,
    );
    const featureStatus = async () =>
      okBody(
        await api(repo.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: repo.repo, branch: "feature" },
        }),
      ).status;
    await repo.client.post(`${repo.base}/comment`, {
      branch: "feature",
      path: "notes.md",
      body: "Is this <b>final</b>?",
    });

    const owner = await (await contextAs(repo.owner)).newPage();
    const ownerErrors = watchErrors(owner);
    await owner.goto(`/ui/repos/${repo.repo}/-/proposals`);
    await owner.getByRole("link", { name: "Add the notes" }).click();
    expect(owner.url()).toMatch(new RegExp(`/-/proposals/${proposal.number}$`));
    expect(await owner.locator("#mergeable").textContent()).toContain("Not mergeable");
    expect(await owner.locator(".file-diff tr.add").allTextContents()).toContain("3A line to review.");
    expect(await owner.locator(".comment").textContent()).toContain("Is this <b>final</b>?");

    await owner.getByRole("button", { name: "Merge into main" }).click();
    const refused = owner.getByRole("alert");
    expect(await refused.textContent()).toContain("merge blocked by require_review");
    expect(await refused.textContent()).toContain("needs an approving review at the head");
    expect(await featureStatus()).toBe("active");

    const reviewer = await (await contextAs(repo.people.reviewer)).newPage();
    await reviewer.goto(`/ui/repos/${repo.repo}/-/proposals/${proposal.id}`);
    await reviewer.getByLabel("Comment").fill("Looks good");
    await reviewer.getByLabel("Approve").check();
    await reviewer.getByRole("button", { name: "Submit review" }).click();
    expect(reviewer.url()).toMatch(new RegExp(`/-/proposals/${proposal.number}$`));
    expect(await reviewer.locator(".review").textContent()).toContain(`approved by ${repo.people.reviewer}`);
    expect(await reviewer.getByRole("button", { name: "Merge into main" }).count()).toBe(0);

    await owner.goto(`/ui/repos/${repo.repo}/-/proposals/${proposal.id}`);
    expect(await owner.locator("#mergeable").textContent()).toContain("Mergeable");
    await owner.getByRole("button", { name: "Merge into main" }).click();
    expect(await owner.locator(".state").textContent()).toBe("merged");
    expect(await featureStatus()).toBe("merged");
    expect(ownerErrors.filter((e) => !e.includes("403"))).toEqual([]);
    await screenshot(owner, "proposal-merged");
  });

  it("shows a check result on an open branch page as soon as it is reported", async () => {
    const repo = await world(app).repo();
    const head = (await repo.branch("live", { files: { "a.txt": "a\n" } })).head;
    const page = await (await contextAs(repo.owner)).newPage();
    const errors = watchErrors(page);
    await page.goto(`/ui/repos/${repo.repo}/-/branch/live`);
    expect(await page.locator("#no-checks").count()).toBe(1);
    await page.locator('main[data-live-state="open"]').waitFor();

    expectStatus(
      await repo.client.post(`${repo.base}/check`, { branch: "live", check_name: "lint", status: "passed" }),
      201,
    );
    const row = page.locator(".check-run");
    await row.waitFor();
    expect(await row.textContent()).toContain("lint");
    expect(await row.textContent()).toContain("passed");
    expect(await row.textContent()).toContain(String(head));
    expect(await page.locator("#live-status").textContent()).toContain("Updated");
    expect(errors).toEqual([]);
    await screenshot(page, "check-live");
  });
});

describe("the review form offers only what the person may do", () => {
  it("offers the author no Approve, a reader no form, and keeps what was typed when refused", async () => {
    const repo = await world(app).repo({ people: { reviewer: "writer", reader: "reader" } });
    await repo.branch("mine", { files: { "a.md": "# A\n" } });
    const url = `/ui/repos/${repo.repo}/-/branch/mine`;

    const author = await (await contextAs(repo.owner)).newPage();
    await author.goto(url);
    expect(await author.getByLabel("Approve").count()).toBe(0);
    expect(await author.getByLabel("Request changes").isChecked()).toBe(true);
    expect(await author.locator("#no-self-approval").textContent()).toContain("not approve");

    const reader = await (await contextAs(repo.people.reader)).newPage();
    await reader.goto(url);
    expect(await reader.locator("#review-form").count()).toBe(0);
    expect(await reader.locator("#no-review-rights").textContent()).toContain("writer");

    // The reviewer opens the form, then commits to the branch elsewhere: approving is now refused.
    const reviewer = await (await contextAs(repo.people.reviewer)).newPage();
    await reviewer.goto(url);
    expect(await reviewer.getByLabel("Approve").isChecked()).toBe(false);
    await reviewer.getByLabel("Comment").fill("Ship it <now>");
    await reviewer.getByLabel("Approve").check();
    await repo.commit("mine", { "b.md": "b\n" }, "add b", repo.as("reviewer"));
    const answer = reviewer.waitForResponse((r) => r.url().endsWith("/review"));
    await reviewer.getByRole("button", { name: "Submit review" }).click();
    expect((await answer).status()).toBe(403);
    expect(await reviewer.locator("#review-refused").textContent()).toContain("cannot approve");
    expect(await reviewer.getByLabel("Comment").inputValue()).toBe("Ship it <now>");
    expect(await reviewer.getByLabel("Approve").count()).toBe(0);
    await reviewer.getByRole("button", { name: "Submit review" }).click();
    expect(await reviewer.locator(".review").textContent()).toContain(`rejected by ${repo.people.reviewer}`);
    await screenshot(author, "review-form-author");
  });
});
