import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";
import { expectExit, quireAs, runQuire, tempHome } from "./support.ts";
import { copyWorld } from "./workcopy-support.ts";

/*
 * Each hint of the CLI leads to the next right step (issue 19): the CLI runs as a child process
 * against a real server, and the test reads what it says.
 */

const app = useFixture(startTestApp);
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

let home: Awaited<ReturnType<typeof tempHome>>;
beforeAll(async () => {
  home = await tempHome();
});
afterAll(async () => {
  await home.remove();
});

describe("quire whoami", () => {
  it("with QUIRE_TOKEN shows who the server sees, the token's email and when it expires", async () => {
    const r = expectExit(await quireAs(app, home.dir, "ana@example.com")(["whoami"]), 0);
    expect(r.stdout).toMatch(/identity: +ana@example\.com/);
    expect(r.stdout).toMatch(/token: +QUIRE_TOKEN/);
    expect(r.stdout).toMatch(/email: +ana@example\.com/);
    expect(r.stdout).toMatch(new RegExp(`expires: +${ISO.source} \\(in \\d+ (minutes|hour)\\)`));
    const json = expectExit(await quireAs(app, home.dir, "ana@example.com")(["whoami", "--json"]), 0).json();
    expect(json).toMatchObject({
      server: app.url,
      identity: "ana@example.com",
      server_sees: "bearer",
      token: "QUIRE_TOKEN",
      expires_at: expect.stringMatching(ISO),
    });
  });

  it("without any token says not signed in, and names both ways in", async () => {
    const r = expectExit(await runQuire(["whoami"], home.dir, { env: { QUIRE_SERVER: app.url } }), 1);
    expect(r.stderr).toContain(`not signed in to ${app.url}`);
    expect(r.stderr).toContain("QUIRE_TOKEN");
  });

  it("says when QUIRE_TOKEN expired rather than asking to set it", async () => {
    const expired = await app.idp.token("ana@example.com", { expiresIn: -7200 });
    for (const args of [["orgs", "list"], ["whoami"]]) {
      const r = expectExit(
        await runQuire(args, home.dir, { env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: expired } }),
        1,
      );
      expect(r.stderr).toMatch(new RegExp(`QUIRE_TOKEN expired at ${ISO.source} \\(2 hours ago\\)`));
      expect(r.stderr).toContain("set QUIRE_TOKEN to a fresh ID token");
      expect(r.stderr).not.toContain('"exp" claim');
    }
  });
});

describe("a DEV_IDENTITY server", () => {
  it("whoami shows the identity everyone is, and login says no sign-in is needed", async () => {
    const dev = await startTestApp({ DEV_IDENTITY: "dev@example.com" });
    try {
      const who = expectExit(await runQuire(["whoami"], home.dir, { env: { QUIRE_SERVER: dev.url } }), 0);
      expect(who.stdout).toMatch(/identity: +dev@example\.com/);
      expect(who.stderr).toContain("this server runs with DEV_IDENTITY: every request is dev@example.com");
      const login = expectExit(await runQuire(["login", dev.url], home.dir), 0);
      expect(login.stdout).toContain("no sign-in needed");
    } finally {
      await dev.close();
    }
  }, 60_000);
});

describe("hints that lead to the next step", () => {
  it("login on a server without CLI sign-in points to QUIRE_TOKEN", async () => {
    const r = expectExit(await runQuire(["login", app.url, "--no-browser"], home.dir), 1);
    expect(r.stderr).toContain("404");
    expect(r.stderr).toMatch(/hint: .*set QUIRE_TOKEN to an ID token/);
  });

  it("a missing branch is a branch to look up, not a repo name to check", async () => {
    const repo = await world(app).repo();
    const r = expectExit(
      await quireAs(app, home.dir, repo.owner)(["branches", "view", repo.repo, "no-such-branch"]),
      1,
    );
    expect(r.stderr).toContain("BRANCH_NOT_FOUND");
    expect(r.stderr).toContain(`quire branches list <repo> --all`);
    expect(r.stderr).not.toContain("repos are `org/name`");
  });

  it("approving one's own branch asks for another writer, not a role", async () => {
    const repo = await world(app).repo();
    const b = await repo.branch("mine", { files: { "a.md": "a\n" } });
    const r = expectExit(
      await quireAs(app, home.dir, repo.owner)(["reviews", "approve", repo.repo, b.name]),
      1,
    );
    expect(r.stderr).toContain("SELF_APPROVAL");
    expect(r.stderr).toContain("ask another writer of the repo to review it");
    expect(r.stderr).not.toContain("for a role");
  });

  it("events without a repo, for someone not a global admin, says to name a repo", async () => {
    const r = expectExit(await quireAs(app, home.dir, "ana@example.com")(["events", "-n", "1"]), 1);
    expect(r.stderr).toContain("for global admins");
    expect(r.stderr).toContain("quire events <org>/<repo>");
  });

  it("a bare loopback host:port is plain HTTP; https to a plain server says to write http://", async () => {
    const port = new URL(app.url).port;
    const bare = await quireAs(
      app,
      home.dir,
      "ana@example.com",
    )(["orgs", "list"], {
      env: { QUIRE_SERVER: `127.0.0.1:${port}` },
    });
    expectExit(bare, 0);
    const tls = expectExit(
      await quireAs(
        app,
        home.dir,
        "ana@example.com",
      )(["orgs", "list"], {
        env: { QUIRE_SERVER: `https://127.0.0.1:${port}` },
      }),
      1,
    );
    expect(tls.stderr).toContain("does not answer TLS");
    expect(tls.stderr).toContain(`--server http://127.0.0.1:${port}`);
    const login = expectExit(
      await runQuire(["login", `https://127.0.0.1:${port}`, "--no-browser"], home.dir),
      1,
    );
    expect(login.stderr).toContain("does not answer TLS");
  });

  it("merge --dry-run says 'would be refused' when it would be, and 'would merge' when it would", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "x.md": "base\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "topic"], "c");
      await w.write("c/x.md", "topic\n");
      await w.json(["commit", "-m", "topic"], "c");
      const fine = await w.run(["merge", "--dry-run"], "c");
      expect(fine.code).toBe(0);
      expect(fine.stdout).toContain("'topic' would merge now");
      await w.repo.commit("main", { "x.md": "main\n" });
      const refused = await w.run(["merge", "--dry-run"], "c");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("a merge now would be refused: the branch conflicts with main");
      expect(refused.stderr).toContain("dry run: nothing changed");
    } finally {
      await w.cleanup();
    }
  }, 120_000);
});
