import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { folderPrefixes, governingPrefix, parseOwnersFile } from "../../shared/merge/owners.ts";
import { cliBin, expectExit, quireAs, tempHome } from "../cli/support.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, installPolicies, type RepoHandle, useFixture, world } from "../support/world.ts";
import { screenshot, signedInContext, useBrowser, watchErrors } from "../web/browser.ts";
import { merge, statusOf } from "./fixtures.ts";

/**
 * Code owners over real HTTP with the real opa: OWNERS files on main, the shipped require_owners
 * policy (docs/policies/require_owners.rego), the status's owners, the CLI and the branch page.
 */

const app = useFixture(startTestApp);
const chrome = useBrowser();
const shipped = readFile(new URL("../../docs/policies/require_owners.rego", import.meta.url), "utf8");

/** Passes always and reports `input.owners` as its reason, so a test can read the input's map. */
const ECHO_OWNERS = `package quire.policy.echo_owners

allow := true

reason := json.marshal(input.owners)
`;

describe("OWNERS files, parsed", () => {
  it("keeps emails (lower case, once), skips comments and blanks, reports other lines", () => {
    expect(
      parseOwnersFile(
        "# docs team\n\nCarol@Example.com\r\n  bob@example.com \ncarol@example.com\nnot an email\n@x\n\u001b[31mred\n",
      ),
    ).toEqual({
      emails: ["carol@example.com", "bob@example.com"],
      invalid: [
        { line: 6, text: "not an email" },
        { line: 7, text: "@x" },
        { line: 8, text: "\uFFFD[31mred" },
      ],
    });
  });

  it("resolves a path to the longest prefix above it", () => {
    expect(folderPrefixes("a/b/c.md")).toEqual(["", "a/", "a/b/"]);
    const owners = { "": ["r@x.io"], "docs/": ["d@x.io"], "docs/api/": ["a@x.io"] };
    expect(governingPrefix(owners, "docs/api/ref.md")).toBe("docs/api/");
    expect(governingPrefix(owners, "docs/apiary.md")).toBe("docs/");
    expect(governingPrefix(owners, "README.md")).toBe("");
    expect(governingPrefix({ "docs/": ["d@x.io"] }, "notes.md")).toBeNull();
  });
});

describe("code owners in merge policies", { timeout: 90_000 }, () => {
  let repo: RepoHandle<"carol" | "ops" | "cfg">;
  let home: Awaited<ReturnType<typeof tempHome>>;

  beforeAll(async () => {
    await cliBin();
    home = await tempHome();
    repo = await world(app).repo({ people: { carol: "writer", ops: "writer", cfg: "writer" } });
    const { carol, ops, cfg } = repo.people;
    await repo.commit("main", {
      "docs/OWNERS": `# the docs team\n${carol.toUpperCase()}\n\nnot an email\n`,
      // Only comments: docs/'s owners govern below it.
      "docs/api/OWNERS": "# nobody yet\n",
      "config/OWNERS": `${cfg}\n`,
      "config/prod/OWNERS": `${ops}\n`,
    });
    await installPolicies(repo, { require_owners: await shipped, echo_owners: ECHO_OWNERS });
  });
  afterAll(() => home?.remove());

  const approve = (who: "carol" | "ops", branch: string) =>
    api(repo.as(who)).post("/repos/:repo*/-/review", {
      params: { repo: repo.repo },
      body: { branch, status: "approved", body: "owner ok" },
    });
  const ownersPolicy = async (branch: string) =>
    (await statusOf(repo, branch)).policies.find((p) => p.name === "require_owners");

  it("refuses the merge until each path's owners approve the head, and again after a new commit", async () => {
    const { carol, ops, cfg } = repo.people;
    await repo.branch("feature", {
      files: {
        "docs/guide.md": "guide",
        "docs/api/ref.md": "ref",
        "config/prod/db.yaml": "db: 1",
        "notes/free.md": "no owners here",
      },
    });

    const status = await statusOf(repo, "feature");
    expect(status.mergeable).toBe(false);
    // The input's owners: each OWNERS file above a changed path, by folder prefix.
    expect(JSON.parse(status.policies.find((p) => p.name === "echo_owners")?.reason ?? "")).toEqual({
      "config/": [cfg],
      "config/prod/": [ops],
      "docs/": [carol],
    });
    expect(status.owners).toEqual({
      paths: [
        { path: "config/prod/db.yaml", prefix: "config/prod/", owners: [ops], approved_by: [] },
        { path: "docs/api/ref.md", prefix: "docs/", owners: [carol], approved_by: [] },
        { path: "docs/guide.md", prefix: "docs/", owners: [carol], approved_by: [] },
      ],
      invalid_lines: [{ file: "docs/OWNERS", line: 4, text: "not an email" }],
    });
    expect(await ownersPolicy("feature")).toEqual({
      name: "require_owners",
      pass: false,
      reason: `needs an owner's approval at the head: config/prod/db.yaml (asked: ${ops}); docs/api/ref.md, docs/guide.md (asked: ${carol})`,
    });
    expectError(await merge(repo, "feature"), 403, "POLICY_DENIED");

    expect((await approve("carol", "feature")).status).toBe(201);
    expect((await ownersPolicy("feature"))?.reason).toBe(
      `needs an owner's approval at the head: config/prod/db.yaml (asked: ${ops})`,
    );
    expect((await approve("ops", "feature")).status).toBe(201);
    expect(await ownersPolicy("feature")).toMatchObject({ pass: true });
    expect((await statusOf(repo, "feature")).owners.paths.map((p) => p.approved_by)).toEqual([
      [ops],
      [carol],
      [carol],
    ]);

    // A new commit: the approvals were of the old head.
    await repo.commit("feature", { "docs/guide.md": "guide, revised" });
    expect(await ownersPolicy("feature")).toMatchObject({ pass: false });
    expectError(await merge(repo, "feature"), 403, "POLICY_DENIED");
    expect((await approve("carol", "feature")).status).toBe(201);
    expect((await approve("ops", "feature")).status).toBe(201);
    expect((await merge(repo, "feature")).status).toBe(200);
  });

  it("needs nothing for paths without owners, until a root OWNERS file owns them", async () => {
    await repo.branch("free", { files: { "notes/other.md": "free" } });
    const status = await statusOf(repo, "free");
    expect(status.owners).toEqual({ paths: [], invalid_lines: [] });
    expect(await ownersPolicy("free")).toEqual({
      name: "require_owners",
      pass: true,
      reason: "every changed path is approved by an owner",
    });
    expect((await merge(repo, "free")).status).toBe(200);

    // A root OWNERS file governs every path that no deeper file does.
    const { carol } = repo.people;
    await repo.commit("main", { OWNERS: `${carol}\n` });
    await repo.branch("rooted", { files: { "notes/third.md": "now owned", "docs/x.md": "x" } });
    const rooted = await statusOf(repo, "rooted");
    expect(JSON.parse(rooted.policies.find((p) => p.name === "echo_owners")?.reason ?? "")).toEqual({
      "": [carol],
      "docs/": [carol],
    });
    expect(rooted.owners.paths.map((p) => [p.path, p.prefix])).toEqual([
      ["docs/x.md", "docs/"],
      ["notes/third.md", ""],
    ]);
    expect(rooted.policies.find((p) => p.name === "require_owners")?.reason).toBe(
      `needs an owner's approval at the head: docs/x.md (asked: ${carol}); notes/third.md (asked: ${carol})`,
    );
  });

  it("shows the owners in `quire branches status` and on the branch page", async () => {
    const { carol, ops } = repo.people;
    await repo.branch("shown", { files: { "docs/shown.md": "x", "config/prod/x.yaml": "x" } });
    expect((await approve("carol", "shown")).status).toBe(201);

    // Exit 1: the branch cannot merge yet (ops has not approved).
    const cli = expectExit(
      await quireAs(app, home.dir, repo.owner)(["branches", "status", repo.repo, "shown"]),
      1,
    );
    expect(cli.stdout).toMatch(new RegExp(`config/prod/x\\.yaml\\s+${ops}\\s+none`));
    expect(cli.stdout).toMatch(new RegExp(`docs/shown\\.md\\s+${carol}\\s+${carol}`));
    expect(cli.stderr).toContain("docs/OWNERS:4: ignored: not an email");

    const context = await signedInContext(chrome.browser, app, repo.owner);
    try {
      const page = await context.newPage();
      const errors = watchErrors(page);
      await page.goto(`/ui/repos/${repo.repo}/-/branch/shown`);
      const rows = page.locator("#owners tr.path-owners");
      expect(await rows.allTextContents()).toEqual([
        `config/prod/x.yaml${ops} (config/prod/OWNERS)✗ waiting`,
        `docs/shown.md${carol} (docs/OWNERS)✓ ${carol}`,
      ]);
      expect(await page.locator("#owners .owners-invalid").textContent()).toBe(
        "Ignored in docs/OWNERS line 4: not an email",
      );
      await screenshot(page, "owners-branch");
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
