import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { signIn } from "../support/signin.ts";
import { type RepoHandle, useFixture, world } from "../support/world.ts";
import { screenshot, useBrowser, useSignedInPages, watchErrors } from "./browser.ts";

// The test provider issues tokens for this audience (test/support/idp.ts).
const CLIENT = { id: "quire-test", secret: "web-edit-secret" };
/** Browser sign-in configured too, for the cookie session's form posts. */
const app = useFixture(async () => {
  const started = await startTestApp({ OIDC_CLIENT_ID: CLIENT.id, OIDC_CLIENT_SECRET: CLIENT.secret });
  started.idp.registerClient({ ...CLIENT, redirectUris: [`${started.url}/auth/callback`] });
  return started;
});
const chrome = useBrowser();
const pageAs = useSignedInPages(app, chrome);

/** A file's bytes on a branch through the API, or null when it is not there. */
async function fileOn(repo: RepoHandle<string>, branch: string, path: string): Promise<Buffer | null> {
  const f = await api(repo.client).get("/repos/:repo*/-/file/:path*", {
    params: { repo: repo.repo, path },
    query: { branch },
  });
  if (f.status === 404) return null;
  expect(f.status).toBe(200);
  return Buffer.from((f.body as { content: string }).content, "base64");
}

describe("editing files from the browser", () => {
  it("edits a file, uploads a new one and deletes it, each a commit on the branch", async () => {
    const repo = await world(app).repo({ people: { writer: "writer" } });
    await repo.branch("feature", { files: { "notes.md": "# Notes\n" } });
    const page = await pageAs(repo.people.writer);
    const errors = watchErrors(page);

    await page.goto(`/ui/repos/${repo.repo}/-/file/notes.md?branch=feature`);
    await page.getByRole("link", { name: "Edit or delete" }).click();
    expect(await page.getByLabel("Content", { exact: true }).inputValue()).toBe("# Notes\n");
    await page.getByLabel("Content", { exact: true }).fill("# Notes\n\nA second line.\n");
    await page.getByLabel("Commit message").fill("Expand the notes");
    await page.getByRole("button", { name: "Commit" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/file/notes.md`);
    expect((await fileOn(repo, "feature", "notes.md"))?.toString()).toBe("# Notes\n\nA second line.\n");

    await page.goto(`/ui/repos/${repo.repo}/-/tree?branch=feature`);
    await page.getByRole("link", { name: "Add a file" }).click();
    await page.getByLabel("Path").fill("data/blob.bin");
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
    await page.getByLabel("Or upload a file").setInputFiles({
      name: "blob.bin",
      mimeType: "application/octet-stream",
      buffer: bytes,
    });
    await page.getByLabel("Commit message").fill("Upload a blob");
    await page.getByRole("button", { name: "Commit" }).click();
    expect((await fileOn(repo, "feature", "data/blob.bin"))?.equals(bytes)).toBe(true);

    await page.goto(`/ui/repos/${repo.repo}/-/edit?branch=feature&path=data/blob.bin`);
    await page.getByLabel("Deletion message").fill("Remove the blob");
    await page.getByRole("button", { name: "Delete file" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/tree`);
    expect(await fileOn(repo, "feature", "data/blob.bin")).toBeNull();
    expect(await fileOn(repo, "main", "notes.md")).toBeNull();
    expect(errors).toEqual([]);
    await screenshot(page, "file-deleted");
  });

  it("refuses a commit made on a head that moved, keeping the text and the message", async () => {
    const repo = await world(app).repo({ people: { writer: "writer" } });
    await repo.branch("feature", { files: { "notes.md": "# Notes\n" } });
    const page = await pageAs(repo.people.writer);
    await page.goto(`/ui/repos/${repo.repo}/-/edit?branch=feature&path=notes.md`);
    await page.getByLabel("Content", { exact: true }).fill("# Notes\n\nMy careful paragraph.\n");
    await page.getByLabel("Commit message").fill("Write the paragraph");

    await repo.commit("feature", { "notes.md": "# Notes\n\nSomeone else's line.\n" }, "Meanwhile");
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Commit" }).click(),
    ]);
    expect(response.status()).toBe(409);
    expect(await page.getByRole("alert").textContent()).toContain("HEAD_MOVED");
    expect(await page.getByLabel("Content", { exact: true }).inputValue()).toBe(
      "# Notes\n\nMy careful paragraph.\n",
    );
    expect(await page.getByLabel("Commit message").inputValue()).toBe("Write the paragraph");
    expect((await fileOn(repo, "feature", "notes.md"))?.toString()).toBe("# Notes\n\nSomeone else's line.\n");
    await screenshot(page, "commit-head-moved");
    await page.getByRole("link", { name: "Back to the files on feature" }).click();
    expect(new URL(page.url()).pathname).toBe(`/ui/repos/${repo.repo}/-/tree`);
  });

  it("offers main only to maintainers and sends a writer to a branch", async () => {
    const repo = await world(app).repo({
      people: { writer: "writer", maintainer: "maintainer", reader: "reader" },
    });
    await repo.branch("feature");
    const writer = await pageAs(repo.people.writer);
    await writer.goto(`/ui/repos/${repo.repo}/-/tree`);
    await writer.getByRole("link", { name: "Add a file" }).click();
    expect(await writer.locator("#commit-form").count()).toBe(0);
    expect(await writer.locator("#main-refused").textContent()).toContain("needs the maintainer role");
    await writer.getByRole("link", { name: "feature" }).click();
    expect(await writer.locator("#commit-form").count()).toBe(1);

    const maintainer = await pageAs(repo.people.maintainer);
    await maintainer.goto(`/ui/repos/${repo.repo}/-/edit?branch=main`);
    expect(await maintainer.locator("#commit-form").count()).toBe(1);

    const reader = await pageAs(repo.people.reader);
    await reader.goto(`/ui/repos/${repo.repo}/-/tree`);
    expect(await reader.getByRole("link", { name: "Add a file" }).count()).toBe(0);
  });

  it("takes a cookie session's upload form only with the session's CSRF token", async () => {
    const repo = await world(app).repo();
    await repo.branch("feature");
    const session = await signIn(app, repo.owner);
    const post = (token?: string) => {
      const form = new FormData();
      if (token !== undefined) form.set("csrf_token", token);
      form.set("branch", "feature");
      form.set("path", "up.bin");
      form.set("message", "Upload");
      form.set("upload", new Blob([new Uint8Array([1, 2, 3])]), "up.bin");
      return fetch(`${app.url}/ui/repos/${repo.repo}/-/commit`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: session.cookie, origin: app.url },
        body: form,
      });
    };
    expect((await post()).status).toBe(403);
    expect((await post("x".repeat(session.csrfToken.length))).status).toBe(403);
    expect((await post(session.csrfToken)).status).toBe(303);
    expect((await fileOn(repo, "feature", "up.bin"))?.equals(Buffer.from([1, 2, 3]))).toBe(true);
  });

  it("keeps the text of a commit refused because the role was lost meanwhile, without the form", async () => {
    const repo = await world(app).repo({ people: { maintainer: "maintainer" } });
    const page = await pageAs(repo.people.maintainer);
    await page.goto(`/ui/repos/${repo.repo}/-/edit?branch=main`);
    await page.getByLabel("Path").fill("policy.md");
    await page.getByLabel("Content", { exact: true }).fill("Only maintainers write here.\n");
    await page.getByLabel("Commit message").fill("Add the policy");

    await repo.grant(repo.people.maintainer, "writer");
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.getByRole("button", { name: "Commit" }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(await page.getByRole("alert").textContent()).toContain("needs the maintainer role");
    expect(await page.locator("#commit-form").count()).toBe(0);
    expect(await page.locator("#kept").textContent()).toContain("Only maintainers write here.");
    expect(await page.locator("#kept").textContent()).toContain("Add the policy");
    expect(await fileOn(repo, "main", "policy.md")).toBeNull();
    await screenshot(page, "commit-forbidden");
  });

  it("replaces a binary file only by an upload, never through the text box", async () => {
    const repo = await world(app).repo({ people: { writer: "writer" } });
    const branch = await repo.branch("feature");
    await branch.commit({ "logo.bin": Buffer.from([0, 159, 146, 150]) });
    const page = await pageAs(repo.people.writer);
    await page.goto(`/ui/repos/${repo.repo}/-/edit?branch=feature&path=logo.bin`);
    expect(await page.locator("#edit-content").count()).toBe(0);
    expect(await page.locator("#binary-note").count()).toBe(1);
    const bytes = Buffer.from([255, 0, 255, 0]);
    await page
      .getByLabel("Upload a file")
      .setInputFiles({ name: "logo.bin", mimeType: "image/x-test", buffer: bytes });
    await page.getByRole("button", { name: "Commit" }).click();
    expect((await fileOn(repo, "feature", "logo.bin"))?.equals(bytes)).toBe(true);
  });
});
