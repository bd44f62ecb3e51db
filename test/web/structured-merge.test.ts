import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectStatus, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

/**
 * Issue 23's "Done when" in the browser (docs/merge.md, docs/web.md): a merge from the web takes
 * both people's edits to different keys of one JSON file, and a real conflict is refused with the
 * place inside the file named, with the base's, main's and the branch's value, also at 390 px.
 */
const app = useFixture(startTestApp);
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

const CONFIG = `{
    "name": "docs",
    "limits": {
        "max_files": 100,
        "max_bytes": 1048576
    }
}
`;

describe("merging a JSON file both sides changed, in the browser", () => {
  it("merges different keys in the file's own format, and refuses a real conflict naming limits.max_files", async () => {
    const repo = await world(app).repo();
    await repo.commit("main", { "config.json": CONFIG });
    await repo.branch("bytes", { files: { "config.json": CONFIG.replace("1048576", "2097152") } });
    await repo.commit("main", { "config.json": CONFIG.replace("100,", "200,") });

    const owner = await pageAs(repo.owner);
    const errors = watchErrors(owner);
    await owner.goto(`/ui/repos/${repo.repo}/-/branch/bytes`);
    expect(await owner.locator("#mergeable").textContent()).toContain("Mergeable");
    await owner.getByRole("button", { name: "Merge into main" }).click();
    // Without a proposal the merge lands on its commit's page.
    await owner.waitForURL(/\/-\/commit\/\d+$/);
    expect(await owner.locator("main").textContent()).toContain("Merge branch 'bytes'");
    const merged = okBody(
      await api(repo.client).get("/repos/:repo*/-/file/:path*", {
        params: { repo: repo.repo, path: "config.json" },
        query: { branch: "main" },
      }),
    );
    // Both edits, with the base's four-space indentation and trailing newline.
    expect(Buffer.from(merged.content, "base64").toString()).toBe(
      CONFIG.replace("100,", "200,").replace("1048576", "2097152"),
    );

    // Both sides change max_files: the proposal's status and the refusal name the place.
    const onMain = CONFIG.replace("100,", "200,").replace("1048576", "2097152");
    await repo.branch("clash", { files: { "config.json": onMain.replace("200,", "500,") } });
    await repo.commit("main", { "config.json": onMain.replace("200,", "300,") });
    const proposal = expectStatus(
      await api(repo.client).post("/repos/:repo*/-/proposals", {
        params: { repo: repo.repo },
        body: { branch: "clash", title: "More files" },
      }),
      201,
    );
    const phone = await pageAs(repo.owner, { viewport: { width: 390, height: 844 } });
    const phoneErrors = watchErrors(phone);
    await phone.goto(`/ui/repos/${repo.repo}/-/proposals/${proposal.number}`);
    expect(await phone.locator("#mergeable").textContent()).toContain("Not mergeable");
    const noticeRow = phone.locator("#status-conflicts table.conflict-places tbody tr");
    expect(await noticeRow.allInnerTexts()).toEqual([
      expect.stringMatching(/limits\.max_files\s+200\s+300\s+500/),
    ]);

    await phone.getByRole("button", { name: "Merge into main" }).click();
    const refused = phone.locator("#merge-refused");
    expect(await refused.getByRole("heading").textContent()).toBe("Merge refused");
    expect(await refused.locator("li[data-conflict]").getAttribute("data-conflict")).toBe("config.json");
    expect(await refused.locator("li[data-conflict]").textContent()).toContain("merged as json");
    const cells = await refused
      .locator("table.conflict-places tbody tr")
      .first()
      .locator("th, td")
      .allInnerTexts();
    expect(cells).toEqual(["limits.max_files", "200", "300", "500"]);
    expect(await phone.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await screenshot(phone, "merge-refused-structured-390");

    const clash = okBody(
      await api(repo.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: repo.repo, branch: "clash" },
      }),
    );
    expect(clash.status).toBe("active");
    expect(errors).toEqual([]);
    expect(phoneErrors.filter((e) => !e.includes("409"))).toEqual([]);
  });
});
