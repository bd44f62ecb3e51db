import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createClient, type QuireClient } from "../../cli/client/index.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { ANY_SGR, type CliResult, cliBin, expectExit, quireAs, runQuire, tempHome } from "./support.ts";

/**
 * Every resource command of `quire`, as a child process over real HTTP against one test app,
 * without a terminal: `--json` gives the API's own shapes, plain output is tab-separated, mutations
 * change what the API then shows, and refusals exit 1 with the server's code and a hint.
 */

const OWNER = "cli-owner@example.com";
const FRIEND = "cli-friend@example.com";
const ORG = "clires";
const REPO = `${ORG}/docs/with/slashes`;

let app: TestApp;
let home: Awaited<ReturnType<typeof tempHome>>;
let owner: ReturnType<typeof quireAs>;
let friend: ReturnType<typeof quireAs>;
let api: QuireClient;
let head = 0;

/** The `--json` output of a run that must succeed; with a shape, checked to have what the test reads. */
function json(r: Promise<CliResult>): Promise<unknown>;
function json<T>(r: Promise<CliResult>, shape: z.ZodType<T>): Promise<T>;
async function json(r: Promise<CliResult>, shape: z.ZodType = z.unknown()) {
  return shape.parse(expectExit(await r, 0).json());
}
const withId = z.looseObject({ id: z.string() });
const ids = z.array(withId);
const names = z.array(z.looseObject({ name: z.string() }));

beforeAll(async () => {
  await cliBin();
  app = await startTestApp({ SVC_WEBHOOK_ALLOW_PRIVATE: "true" });
  home = await tempHome();
  owner = quireAs(app, home.dir, OWNER);
  friend = quireAs(app, home.dir, FRIEND);
  api = createClient({ server: app.url, token: () => app.idp.token(OWNER) });
});
afterAll(async () => {
  await app?.close();
  await home?.remove();
});

describe("quire orgs, members, invites", { timeout: 90_000 }, () => {
  it("creates an org, lists and shows it", async () => {
    const created = await json(owner(["orgs", "create", ORG, "--json"]));
    expect(created).toMatchObject({ name: ORG, created_by: OWNER });
    const list = await json(owner(["orgs", "list", "--json"]), names);
    expect(list.map((o) => o.name)).toContain(ORG);
    const plain = expectExit(await owner(["orgs", "view", ORG]), 0);
    expect(plain.stdout).toMatch(new RegExp(`^name:\\s+${ORG}$`, "m"));
  });

  it("invites, lists, accepts and revokes", async () => {
    const invite = await json(
      owner(["invites", "create", ORG, FRIEND, "--role", "member", "--json"]),
      z.looseObject({ id: z.string(), token: z.string() }),
    );
    expect(invite).toMatchObject({ email: FRIEND, role: "member", token: expect.any(String) });
    const pending = await json(owner(["invites", "list", ORG, "--json"]), ids);
    expect(pending.map((i) => i.id)).toEqual([invite.id]);
    const accepted = await json(friend(["invites", "accept", ORG, invite.token, "--json"]));
    expect(accepted).toMatchObject({ identity: FRIEND, role: "member" });
    const other = await json(owner(["invites", "create", ORG, "someone@example.com", "--json"]), withId);
    expectExit(await owner(["invites", "revoke", ORG, other.id]), 0);
    expect(await json(owner(["invites", "list", ORG, "--json"]))).toEqual([]);
  });

  it("lists members as tab-separated lines without a terminal, and changes and removes one", async () => {
    const plain = expectExit(await owner(["members", "list", ORG]), 0);
    const rows = plain.stdout
      .trim()
      .split("\n")
      .map((l) => l.split("\t").slice(0, 2));
    expect(rows).toEqual(
      expect.arrayContaining([
        [OWNER, "owner"],
        [FRIEND, "member"],
      ]),
    );
    expect(plain.stdout).not.toMatch(ANY_SGR);
    expect(await json(owner(["members", "add", ORG, FRIEND, "--role", "owner", "--json"]))).toMatchObject({
      role: "owner",
    });
    expectExit(await owner(["members", "remove", ORG, FRIEND]), 0);
    const after = await json(
      owner(["members", "list", ORG, "--json"]),
      z.array(z.object({ identity: z.string() })),
    );
    expect(after.map((m) => m.identity)).toEqual([OWNER]);
  });
});

describe("quire repos, roles, branches", { timeout: 90_000 }, () => {
  it("creates a repo whose name holds slashes and finds it", async () => {
    expect(await json(owner(["repos", "create", REPO, "--json"]))).toMatchObject({ name: REPO, owner: ORG });
    expect((await json(owner(["repos", "list", "--json"]), names)).map((r) => r.name)).toContain(REPO);
    expect(await json(owner(["repos", "view", REPO, "--json"]))).toMatchObject({ name: REPO });
    expect((await json(owner(["orgs", "repos", ORG, "--json"]), names)).map((r) => r.name)).toEqual([REPO]);
    head = (
      await api.post("/repos/:repo*/-/commit", {
        params: { repo: REPO },
        body: {
          branch: "main",
          message: "first",
          files: [{ path: "a.md", content: Buffer.from("a\n").toString("base64") }],
        },
      })
    ).sequence;
  });

  it("grants, lists and removes roles", async () => {
    expect(await json(owner(["roles", "set", REPO, FRIEND, "writer", "--json"]))).toMatchObject({
      identity: FRIEND,
      role: "writer",
    });
    const roles = await json(owner(["roles", "list", REPO, "--json"]));
    expect(roles).toEqual(
      expect.arrayContaining([expect.objectContaining({ identity: FRIEND, role: "writer" })]),
    );
    const bad = expectExit(await owner(["roles", "set", REPO, FRIEND, "emperor"]), 2);
    expect(bad.stderr).toContain("'emperor' is not a role");
  });

  it("creates branches with slashes, lists them by status, marks draft and ready, deletes", async () => {
    const b = await json(owner(["branches", "create", REPO, "feature/one", "--json"]));
    expect(b).toMatchObject({ name: "feature/one", base_sequence: head, draft: false });
    await json(owner(["branches", "create", REPO, "feature/draft", "--draft", "--json"]));
    const active = await json(owner(["branches", "list", REPO, "--json"]), names);
    expect(active.map((x) => x.name).sort()).toEqual(["feature/one", "main"]);
    const drafts = await json(owner(["branches", "list", REPO, "--drafts", "--json"]), names);
    expect(drafts.map((x) => x.name)).toEqual(["feature/draft"]);
    expect(await json(owner(["branches", "ready", REPO, "feature/draft", "--json"]))).toMatchObject({
      draft: false,
    });
    expect(await json(owner(["branches", "view", REPO, "feature/draft", "--json"]))).toMatchObject({
      draft: false,
    });
    const status = await json(owner(["branches", "status", REPO, "feature/one", "--json"]));
    expect(status).toMatchObject({
      mergeable: expect.any(Boolean),
      policies: expect.any(Array),
      conflicts: [],
    });
    await api.post("/repos/:repo*/-/branch", { params: { repo: REPO }, body: { name: "feature/auto" } });
    expect(
      await json(owner(["branches", "auto-merge", REPO, "feature/auto", "--off", "--json"])),
    ).toMatchObject({
      auto_merge: false,
    });
    const on = expectExit(await owner(["branches", "auto-merge", REPO, "feature/auto"]), 0);
    expect(on.stdout).toContain(`as ${OWNER}, once its policies pass`);
    // The repo has no policies: the relay merges it, and the branch keeps who enabled it.
    await vi.waitFor(
      async () =>
        expect(
          (
            await api.get("/repos/:repo*/-/branch/:branch*", {
              params: { repo: REPO, branch: "feature/auto" },
            })
          ).status,
        ).toBe("merged"),
      { timeout: 10_000, interval: 50 },
    );
    const viewed = expectExit(await owner(["branches", "view", REPO, "feature/auto"]), 0);
    expect(viewed.stdout).toMatch(new RegExp(`^auto-merge:\\s+on, by ${OWNER}$`, "m"));
    expect(expectExit(await owner(["branches", "auto-merge", REPO, "main"]), 1).stderr).toContain(
      "VALIDATION_FAILED",
    );
    expectExit(await owner(["branches", "delete", REPO, "feature/draft"]), 0);
    const abandoned = await json(
      owner(["branches", "list", REPO, "--status", "abandoned", "--all", "--json"]),
      names,
    );
    expect(abandoned.map((x) => x.name)).toEqual(["feature/draft"]);
  });
});

describe("quire proposals, reviews, comments, checks", { timeout: 90_000 }, () => {
  it("opens, lists, edits and closes a proposal", async () => {
    await api.post("/repos/:repo*/-/commit", {
      params: { repo: REPO },
      body: {
        branch: "feature/one",
        message: "b",
        files: [{ path: "b.md", content: Buffer.from("b\n").toString("base64") }],
      },
    });
    const p = await json(
      owner(["proposals", "open", REPO, "feature/one", "-t", "Add b", "-d", "why", "--json"]),
      withId,
    );
    expect(p).toMatchObject({ branch: "feature/one", base_branch: "main", title: "Add b", state: "open" });
    expect(
      (await json(owner(["proposals", "list", REPO, "--state", "open", "--json"]), ids)).map((x) => x.id),
    ).toEqual([p.id]);
    expect(await json(owner(["proposals", "edit", REPO, p.id, "-t", "Add b.md", "--json"]))).toMatchObject({
      title: "Add b.md",
    });
    expect(await json(owner(["proposals", "view", REPO, p.id, "--json"]))).toMatchObject({
      title: "Add b.md",
      description: "why",
    });
    expect(await json(owner(["proposals", "close", REPO, p.id, "--json"]))).toMatchObject({
      state: "closed",
    });
    const usage = expectExit(await owner(["proposals", "list", REPO, "--state", "sideways"]), 2);
    expect(usage.stderr).toContain("sideways");
  });

  it("reviews: a writer approves, the list shows it", async () => {
    const r = await json(
      friend(["reviews", "approve", REPO, "feature/one", "-m", "looks right", "--json"]),
      withId,
    );
    expect(r).toMatchObject({ status: "approved", reviewer: FRIEND, body: "looks right" });
    const list = await json(owner(["reviews", "list", REPO, "feature/one", "--json"]));
    expect(list).toEqual([expect.objectContaining({ id: r.id, status: "approved" })]);
  });

  it("comments on a file with any character, lists and deletes", async () => {
    const c = await json(
      owner(["comments", "add", REPO, "feature/one", "b.md", "-m", "typo?", "--json"]),
      withId,
    );
    expect(c).toMatchObject({ path: "b.md", body: "typo?" });
    expect(
      await json(owner(["comments", "list", REPO, "feature/one", "--path", "b.md", "--json"])),
    ).toHaveLength(1);
    expectExit(await owner(["comments", "delete", REPO, c.id]), 0);
    expect(await json(owner(["comments", "list", REPO, "feature/one", "--json"]))).toEqual([]);
  });

  it("reports a check and lists it", async () => {
    const c = await json(
      owner([
        "checks",
        "report",
        REPO,
        "feature/one",
        "docs/lint",
        "--status",
        "passed",
        "--log-url",
        "https://ci.example/1",
        "--json",
      ]),
    );
    expect(c).toMatchObject({ check_name: "docs/lint", status: "passed", log_url: "https://ci.example/1" });
    const list = await json(owner(["checks", "list", REPO, "feature/one", "--json"]));
    expect(list).toEqual([expect.objectContaining({ check_name: "docs/lint", status: "passed" })]);
  });
});

describe("quire releases, purge, subscriptions", { timeout: 90_000 }, () => {
  it("creates, lists, shows and deletes a release", async () => {
    expect(
      await json(owner(["releases", "create", REPO, "v1", String(head), "-n", "first", "--json"])),
    ).toMatchObject({ name: "v1", sequence: head, notes: "first" });
    expect((await json(owner(["releases", "list", REPO, "--json"]), names)).map((r) => r.name)).toEqual([
      "v1",
    ]);
    expect(await json(owner(["releases", "view", REPO, "v1", "--json"]))).toMatchObject({ sequence: head });
    expectExit(await owner(["releases", "delete", REPO, "v1"]), 0);
    expect(await json(owner(["releases", "list", REPO, "--json"]))).toEqual([]);
  });

  it("purge --dry-run reports and deletes nothing", async () => {
    const r = await json(owner(["purge", REPO, "--older-than", "1s", "--dry-run", "--json"]));
    expect(r).toMatchObject({ dry_run: true, older_than: "1s" });
    expect(
      (await json(owner(["branches", "list", REPO, "--status", "abandoned", "--all", "--json"]), names))
        .length,
    ).toBe(1);
    const bad = expectExit(await owner(["purge", REPO, "--older-than", "soon", "--dry-run"]), 1);
    expect(bad.stderr).toContain("INVALID_DURATION");
  });

  it("creates, lists, resumes and deletes a subscription", async () => {
    const s = await json(
      owner([
        "subscriptions",
        "create",
        "http://127.0.0.1:9/hook",
        "--repo",
        REPO,
        "--type",
        "commit.created",
        "--json",
      ]),
      withId,
    );
    expect(s).toMatchObject({
      repo: REPO,
      event_types: ["com.svc.commit.created"],
      config: { url: "http://127.0.0.1:9/hook" },
    });
    expect((await json(owner(["subscriptions", "list", "--json"]), ids)).map((x) => x.id)).toContain(s.id);
    expectExit(await owner(["subscriptions", "resume", s.id]), 0);
    expectExit(await owner(["subscriptions", "delete", s.id]), 0);
    expect((await json(owner(["subscriptions", "list", "--json"]), ids)).map((x) => x.id)).not.toContain(
      s.id,
    );
  });
});

describe("exit codes and errors", { timeout: 90_000 }, () => {
  it("a refusal exits 1 with the server's code and what to do next", async () => {
    const r = expectExit(await friend(["repos", "delete", REPO, "--yes"]), 1);
    expect(r.stderr).toMatch(/error: .*\(403 FORBIDDEN\)/);
    expect(r.stderr).toMatch(/hint: /);
    const missing = expectExit(await owner(["repos", "view", `${ORG}/none`]), 1);
    expect(missing.stderr).toContain("404");
    const asJson = expectExit(await owner(["repos", "view", `${ORG}/none`, "--json"]), 1);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ status: 404, code: expect.any(String) });
  });

  it("no credentials: 401 and a hint to sign in", async () => {
    const r = expectExit(await runQuire(["orgs", "list"], home.dir, { env: { QUIRE_SERVER: app.url } }), 1);
    expect(r.stderr).toContain("quire login");
  });

  it("usage mistakes exit 2; --help exits 0 and lists every flag", async () => {
    expectExit(await owner(["repos", "frobnicate"]), 2);
    expectExit(await owner(["branches", "create", REPO]), 2);
    expectExit(await owner(["repos", "delete", REPO]), 2);
    const help = expectExit(await owner(["branches", "list", "--help"]), 0);
    for (const flag of ["--status", "--drafts", "--all"]) expect(help.stdout).toContain(flag);
    const top = expectExit(await owner(["--help"]), 0);
    for (const word of ["--server", "--json", "--no-color", "orgs", "repos", "events", "archive", "login"])
      expect(top.stdout).toContain(word);
  });

  it("an unreachable server exits 1 naming it", async () => {
    const r = expectExit(await runQuire(["repos", "list", "--server", "http://127.0.0.1:9"], home.dir), 1);
    expect(r.stderr).toContain("could not reach");
  });
});
