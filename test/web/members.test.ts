import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { screenshot, useBrowser, watchErrors } from "./browser.ts";

/**
 * Members and roles in the browser (docs/web.md): an org owner invites, the invitee accepts on
 * the start page, the owner changes and removes roles; two identities in one browser through
 * development mode's "Act as" switcher (DEV_IDENTITIES).
 */

const ALICE = "alice@example.com";
const BOB = "bob@example.com";
const ORG = "team";
const REPO = `${ORG}/handbook`;
const MEMBERS = `/ui/repos/${REPO}/-/members`;

const app = useFixture(() => startTestApp({ DEV_IDENTITIES: `${ALICE},${BOB}` }));
const chrome = useBrowser();

async function actAs(page: Page, who: string) {
  await page.getByLabel("Act as").selectOption(who);
  await page.getByRole("button", { name: "Switch" }).click();
  await page.locator("header.site .who", { hasText: who }).waitFor();
}

const orgRole = async (who: string) =>
  (
    await app.sql<{ role: string }>("SELECT role FROM org_members WHERE org = $1 AND identity = $2", [
      ORG,
      who,
    ])
  )[0]?.role;
const repoRole = async (who: string) =>
  (
    await app.sql<{ role: string }>(
      "SELECT rr.role FROM repo_roles rr JOIN repos r ON r.id = rr.repo_id WHERE r.name = $1 AND rr.identity = $2",
      [REPO, who],
    )
  )[0]?.role;

describe("members and roles in the browser", () => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it("invites, accepts as the invitee, changes and removes roles, and keeps what a refusal was given", async () => {
    const context = await chrome.browser.newContext({ baseURL: app.url });
    closing.push(() => context.close());
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto("/ui/");
    expect((await page.request.post("/orgs", { data: { name: ORG } })).status()).toBe(201);
    expect((await page.request.post("/repos", { data: { owner: ORG, name: REPO } })).status()).toBe(201);

    // A refused grant (an identity with a space) shows the form again as typed, with a way back.
    await page.goto(MEMBERS);
    await page.getByLabel("Identity (email)").fill("not an identity");
    await page.locator("#grant-role-select").selectOption("maintainer");
    await page.getByRole("button", { name: "Grant role" }).click();
    await expect(page.locator("#form-refused").textContent()).resolves.toContain("identity");
    expect(await page.getByLabel("Identity (email)").inputValue()).toBe("not an identity");
    expect(await page.locator("#grant-role-select").inputValue()).toBe("maintainer");
    await screenshot(page, "members-refused");
    await page.locator("#back-link").click();
    errors.splice(0); // the refusal's own 400

    await page.getByLabel("Email", { exact: true }).fill(BOB);
    await page.getByRole("button", { name: "Invite" }).click();
    expect(new URL(page.url()).pathname).toBe(MEMBERS);
    await expect(page.locator("#invites tbody").textContent()).resolves.toContain(BOB);

    // Bob sees the invitation on his start page, accepts it, and lands on the org as a member.
    await page.goto("/ui/");
    await expect(page.locator("#my-invites").count()).resolves.toBe(0);
    await actAs(page, BOB);
    await expect(page.locator("#my-invites").textContent()).resolves.toContain(ORG);
    await screenshot(page, "members-invitation");
    await page.locator("#my-invites").getByRole("button", { name: "Accept" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/orgs/${ORG}`);
    expect(await orgRole(BOB)).toBe("member");
    // A member reads the repo but is no admin: no Members tab, and the page refuses.
    await page.goto(`/ui/repos/${REPO}/-/tree`);
    await expect(page.locator("nav.repo").getByRole("link", { name: "Members" }).count()).resolves.toBe(0);
    expect((await page.goto(MEMBERS))?.status()).toBe(403);
    await page.goto("/ui/");
    await expect(page.locator("#my-invites").count()).resolves.toBe(0);

    // Alice grants Bob a repo role, changes it, and changes his org role.
    await actAs(page, ALICE);
    await page.goto(MEMBERS);
    await expect(page.locator("#invites").count()).resolves.toBe(0);
    await page.getByLabel("Identity (email)").fill(BOB);
    await page.locator("#grant-role-select").selectOption("writer");
    await page.getByRole("button", { name: "Grant role" }).click();
    expect(await repoRole(BOB)).toBe("writer");
    const grant = page.locator(`#repo-roles tr[data-grant="${BOB}"]`);
    await grant.getByLabel(`Role of ${BOB}`).selectOption("maintainer");
    await grant.getByRole("button", { name: "Change role" }).click();
    expect(await repoRole(BOB)).toBe("maintainer");
    const member = page.locator(`#org-members tr[data-member="${BOB}"]`);
    await member.getByLabel(`Role of ${BOB}`).selectOption("owner");
    await member.getByRole("button", { name: "Change role" }).click();
    expect(await orgRole(BOB)).toBe("owner");
    await screenshot(page, "members");
    await page.setViewportSize({ width: 390, height: 800 });
    expect(Number(await page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390);
    await screenshot(page, "members-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    // Removing: the repo grant, then the org membership.
    await page.locator(`#repo-roles tr[data-grant="${BOB}"]`).getByRole("button", { name: "Remove" }).click();
    expect(await repoRole(BOB)).toBeUndefined();
    await expect(page.locator(`#repo-roles tr[data-grant="${BOB}"]`).count()).resolves.toBe(0);
    await page
      .locator(`#org-members tr[data-member="${BOB}"]`)
      .getByRole("button", { name: "Remove" })
      .click();
    expect(await orgRole(BOB)).toBeUndefined();
    await expect(page.locator(`#org-members tr[data-member="${BOB}"]`).count()).resolves.toBe(0);

    // The last owner cannot leave: refused (409) with the row's choice kept and a link back.
    const alice = page.locator(`#org-members tr[data-member="${ALICE}"]`);
    await alice.getByLabel(`Role of ${ALICE}`).selectOption("member");
    const [refusal] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      alice.getByRole("button", { name: "Change role" }).click(),
    ]);
    expect(refusal.status()).toBe(409);
    await expect(page.locator("#form-refused").textContent()).resolves.toContain("LAST_OWNER");
    expect(await page.getByLabel(`Role of ${ALICE}`).inputValue()).toBe("member");
    expect(await orgRole(ALICE)).toBe("owner");
    errors.splice(0); // the refusal's own 409
    expect(errors).toEqual([]);
  });
});
