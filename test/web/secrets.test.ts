import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

// The test provider issues tokens for this audience (test/support/idp.ts).
const CLIENT = { id: "quire-test", secret: "web-secrets-secret" };
const app = useFixture(async () => {
  const started = await startTestApp({ OIDC_CLIENT_ID: CLIENT.id, OIDC_CLIENT_SECRET: CLIENT.secret });
  started.idp.registerClient({ ...CLIENT, redirectUris: [`${started.url}/auth/callback`] });
  return started;
});
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

describe("the secrets page", () => {
  it("lets an admin set, replace and delete secrets without ever showing a value; others get no page", async () => {
    const repo = await world(app).repo({ people: { admin: "admin", maintainer: "maintainer" } });
    const value = `web-${randomBytes(12).toString("hex")}`;
    const page = await pageAs(repo.people.admin);
    const errors = watchErrors(page);

    await page.goto(`/ui/repos/${repo.repo}/-/tree`);
    await page.getByRole("link", { name: "Secrets" }).click();
    await expect.poll(() => page.locator("#no-secrets").isVisible()).toBe(true);
    await page.getByLabel("Name").fill("DEPLOY_TOKEN");
    await page.getByLabel("Value").fill(value);
    await page.getByLabel("Description (optional)").fill("publishes the site");
    await page.getByRole("button", { name: "Set secret" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/secrets`);
    const row = page.locator("#secrets tbody tr");
    expect(await row.count()).toBe(1);
    expect(await row.first().innerText()).toContain("publishes the site");
    expect(await page.getByLabel("Value").inputValue()).toBe("");
    expect(await page.content()).not.toContain(value);
    await screenshot(page, "secrets-page");
    expect(errors).toEqual([]);

    // A refused post (a bad name) comes back with the name as typed and the value gone.
    await page.getByLabel("Name").evaluate((el) => el.removeAttribute("pattern"));
    await page.getByLabel("Name").fill("bad-name");
    await page.getByLabel("Value").fill(`${value}-typed`);
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Set secret" }).click(),
    ]);
    expect(refused.status()).toBe(400);
    expect(await page.locator("#form-refused").innerText()).toContain("VALIDATION_FAILED");
    expect(await page.getByLabel("Name").inputValue()).toBe("bad-name");
    expect(await page.getByLabel("Value").inputValue()).toBe("");
    expect(await page.content()).not.toContain(value);

    // The API sees what the page set; the page's delete removes it.
    const listed = await api(repo.client).get("/repos/:repo*/-/secrets", { params: { repo: repo.repo } });
    expect((listed.body as { secrets: { name: string }[] }).secrets.map((s) => s.name)).toEqual([
      "DEPLOY_TOKEN",
    ]);
    await page.goto(`/ui/repos/${repo.repo}/-/secrets`);
    await page.getByRole("button", { name: "Delete DEPLOY_TOKEN" }).click();
    await expect.poll(() => page.locator("#no-secrets").isVisible()).toBe(true);
    expect(errors).toEqual([
      "Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);

    // A maintainer has no Secrets tab and no page.
    const other = await pageAs(repo.people.maintainer);
    await other.goto(`/ui/repos/${repo.repo}/-/tree`);
    expect(await other.getByRole("link", { name: "Secrets" }).count()).toBe(0);
    const res = await other.goto(`/ui/repos/${repo.repo}/-/secrets`);
    expect(res?.status()).toBe(403);
  });
});
