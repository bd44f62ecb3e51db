import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

describe("creating an org, a repo and a branch in the browser", () => {
  it("walks from the orgs list to a new branch of a new repo in a new org", async () => {
    const org = world(app).unique("web");
    const page = await pageAs(`${org}-founder@example.com`);
    const errors = watchErrors(page);
    await page.goto("/ui/");
    await page.getByLabel("Org name").fill(org);
    await page.getByRole("button", { name: "Create org" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/orgs/${org}`);

    await page.getByLabel("Repo name").fill("handbook");
    await page.getByRole("button", { name: "Create repo" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${org}/handbook/-/tree`);

    await page.goto(`/ui/repos/${org}/handbook/-/branches`);
    await page.getByLabel("Branch name").fill("first-draft");
    await page.getByRole("button", { name: "Create branch" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${org}/handbook/-/branch/first-draft`);
    expect(await page.locator("main").textContent()).toContain("Branch first-draft");
    expect(errors).toEqual([]);
    await screenshot(page, "branch-created");
  });

  it("refuses a taken name with a page that keeps what was typed and links back", async () => {
    const repo = await world(app).repo();
    await repo.branch("taken");
    const page = await pageAs(repo.owner);

    await page.goto("/ui/");
    await page.getByLabel("Org name").fill(repo.org);
    await page.getByRole("button", { name: "Create org" }).click();
    expect(await page.getByRole("alert").textContent()).toContain(`org '${repo.org}' already exists`);
    expect(await page.getByLabel("Org name").inputValue()).toBe(repo.org);

    await page.goto(`/ui/repos/${repo.repo}/-/branches`);
    await page.getByLabel("Branch name").fill("taken");
    await page.getByLabel("Draft").check();
    const refused = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Create branch" }).click(),
    ]);
    expect(refused[0].status()).toBe(409);
    expect(await page.getByRole("alert").textContent()).toContain("BRANCH_EXISTS");
    expect(await page.getByLabel("Branch name").inputValue()).toBe("taken");
    expect(await page.getByLabel("Draft").isChecked()).toBe(true);
    await screenshot(page, "branch-refused");
    await page.getByRole("link", { name: "Back to the branches" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/branches`);

    await page.goto(`/ui/orgs/${repo.org}`);
    await page.getByLabel("Repo name").fill("bad name!");
    await page.getByRole("button", { name: "Create repo" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("VALIDATION_FAILED");
    expect(await page.getByLabel("Repo name").inputValue()).toBe("bad name!");
  });

  it("offers no form to those the operation would refuse", async () => {
    const member = `${world(app).unique("member")}@example.com`;
    const repo = await world(app).repo({
      people: { writer: "writer", maintainer: "maintainer" },
      members: { [member]: "member" },
    });
    const memberPage = await pageAs(member);
    await memberPage.goto(`/ui/orgs/${repo.org}`);
    expect(await memberPage.locator("#create-repo").count()).toBe(0);

    const writer = await pageAs(repo.people.writer);
    await writer.goto(`/ui/repos/${repo.repo}/-/branches`);
    expect(await writer.locator("#create-branch").count()).toBe(0);

    const maintainer = await pageAs(repo.people.maintainer);
    await maintainer.goto(`/ui/repos/${repo.repo}/-/branches`);
    expect(await maintainer.locator("#create-branch").count()).toBe(1);
    await maintainer.goto(`/ui/orgs/${repo.org}`);
    expect(await maintainer.locator("#create-repo").count()).toBe(0);
  });
});
