import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

describe("opening, editing and closing a proposal in the browser", () => {
  it("opens a proposal for a branch, edits its title and description, and closes it", async () => {
    const repo = await world(app).repo({ people: { writer: "writer" } });
    await repo.branch("feature", { files: { "a.md": "a\n" } });
    const page = await pageAs(repo.people.writer);
    const errors = watchErrors(page);
    await page.goto(`/ui/repos/${repo.repo}/-/proposals`);
    await page.getByLabel("Branch").fill("feature");
    await page.getByLabel("Title").fill("Add a");
    await page.getByLabel("Description").fill("Why a.");
    await page.getByRole("button", { name: "Open proposal" }).click();
    expect(await page.locator("h1").textContent()).toBe("Add a #1");
    expect(await page.locator(".description").textContent()).toContain("Why a.");

    await page.getByLabel("Title").fill("Add the letter a");
    await page.getByLabel("Description").fill("Because <b>a</b> comes first.");
    await page.getByRole("button", { name: "Save proposal" }).click();
    expect(await page.locator("h1").textContent()).toBe("Add the letter a #1");
    expect(await page.locator(".description").textContent()).toContain("Because <b>a</b> comes first.");

    await page.getByRole("button", { name: "Close proposal" }).click();
    expect(await page.locator(".state").textContent()).toBe("closed");
    expect(await page.locator("#edit-proposal").count()).toBe(0);
    const listed = okBody(
      await api(repo.client).get("/repos/:repo*/-/proposals", { params: { repo: repo.repo } }),
    );
    expect(listed.proposals.map((p) => [p.title, p.state])).toEqual([["Add the letter a", "closed"]]);
    expect(errors).toEqual([]);
    await screenshot(page, "proposal-closed");
  });

  it("refuses a second open proposal and a blank title, keeping what was typed", async () => {
    const repo = await world(app).repo();
    await repo.branch("feature", { files: { "a.md": "a\n" } });
    const page = await pageAs(repo.owner);
    await page.goto(`/ui/repos/${repo.repo}/-/proposals`);
    await page.getByLabel("Branch").fill("feature");
    await page.getByLabel("Title").fill("First");
    await page.getByRole("button", { name: "Open proposal" }).click();
    const first = page.url();

    await page.goto(`/ui/repos/${repo.repo}/-/proposals`);
    await page.getByLabel("Branch").fill("feature");
    await page.getByLabel("Title").fill("Second");
    await page.getByLabel("Description").fill("A long thought");
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Open proposal" }).click(),
    ]);
    expect(response.status()).toBe(409);
    expect(await page.getByLabel("Title").inputValue()).toBe("Second");
    expect(await page.getByLabel("Description").inputValue()).toBe("A long thought");
    expect(await page.getByRole("link", { name: "Back to the proposals" }).count()).toBe(1);

    await page.goto(first);
    await page.getByLabel("Title").fill("   ");
    await page.getByLabel("Description").fill("Kept description");
    await page.getByRole("button", { name: "Save proposal" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("must not be blank");
    expect(await page.getByLabel("Description").inputValue()).toBe("Kept description");
    await screenshot(page, "proposal-edit-refused");
  });

  it("offers editing and closing only to the author and maintainers, opening only to writers", async () => {
    const repo = await world(app).repo({
      people: { author: "writer", other: "writer", maintainer: "maintainer", reader: "reader" },
    });
    await repo.branch("feature", { files: { "a.md": "a\n" } });
    const proposal = okBody(
      await api(repo.as("author")).post("/repos/:repo*/-/proposals", {
        params: { repo: repo.repo },
        body: { branch: "feature", title: "By the author" },
      }),
    );
    const url = `/ui/repos/${repo.repo}/-/proposals/${proposal.id}`;
    const forms = async (who: string) => {
      const page = await pageAs(who);
      await page.goto(url);
      return [await page.locator("#edit-proposal").count(), await page.locator("#close-proposal").count()];
    };
    expect(await forms(repo.people.author)).toEqual([1, 1]);
    expect(await forms(repo.people.other)).toEqual([0, 0]);
    expect(await forms(repo.people.maintainer)).toEqual([1, 1]);
    expect(await forms(repo.people.reader)).toEqual([0, 0]);
    const reader = await pageAs(repo.people.reader);
    await reader.goto(`/ui/repos/${repo.repo}/-/proposals`);
    expect(await reader.locator("#open-proposal").count()).toBe(0);
  });
});
