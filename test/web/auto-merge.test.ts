import { describe, expect, it, vi } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { policies } from "../support/policies.ts";
import { installPolicies, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

describe("auto-merge on the branch page", () => {
  it("a writer turns it on and off; it says who enabled it; readers see no button; it merges by itself", async () => {
    const repo = await world(app).repo({ people: { maint: "maintainer", rev: "writer", reader: "reader" } });
    await installPolicies(repo, { require_review: policies.require_review });
    await repo.branch("feature", { files: { "a.md": "a" } });
    await repo.branch("other", { files: { "b.md": "b" } });
    const branchPage = (b: string) => `/ui/repos/${repo.repo}/-/branch/${b}`;
    const branchOf = async (branch: string) =>
      okBody(
        await api(repo.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: repo.repo, branch },
        }),
      );

    const maint = await pageAs(repo.people.maint);
    const errors = watchErrors(maint);
    await maint.goto(branchPage("feature"));
    expect(await maint.locator("#auto-merge-state").count()).toBe(0);
    await maint.getByRole("button", { name: "Enable auto-merge" }).click();
    expect(new URL(maint.url()).pathname).toBe(branchPage("feature"));
    expect(await maint.locator("#auto-merge-state").textContent()).toContain(
      `merges as ${repo.people.maint}`,
    );
    expect(await maint.getByRole("button", { name: "Disable auto-merge" }).count()).toBe(1);
    expect((await branchOf("feature")).auto_merge_by).toBe(repo.people.maint);
    await screenshot(maint, "auto-merge-on");

    const reader = await pageAs(repo.people.reader);
    await reader.goto(branchPage("feature"));
    expect(await reader.locator("#auto-merge-state").count()).toBe(1);
    expect(await reader.locator("#auto-merge-button").count()).toBe(0);

    // Off again on another branch: the line goes, the button offers to turn it on.
    await maint.goto(branchPage("other"));
    await maint.getByRole("button", { name: "Enable auto-merge" }).click();
    await maint.getByRole("button", { name: "Disable auto-merge" }).click();
    expect(await maint.locator("#auto-merge-state").count()).toBe(0);
    expect((await branchOf("other")).auto_merge).toBe(false);

    // The review the policy waits for: the branch merges by itself, and the page offers no button.
    await api(repo.as("rev")).post("/repos/:repo*/-/review", {
      params: { repo: repo.repo },
      body: { branch: "feature", status: "approved", body: "ok" },
    });
    await vi.waitFor(async () => expect((await branchOf("feature")).status).toBe("merged"), {
      timeout: 10_000,
      interval: 20,
    });
    await maint.goto(branchPage("feature"));
    expect(await maint.locator("#auto-merge-button").count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
