import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { runQuire } from "./support.ts";
import { copyWorld } from "./workcopy-support.ts";

/**
 * The first hour with a working copy (issue 19): `log` one line per commit, git's `/dev/null` in
 * diffs of added and deleted files, proposals open by default, the review commands taking the
 * repo and branch from the copy, and `quire open` naming the web page of what you look at.
 */

const app = useFixture(startTestApp);
const REVIEWER = "ux-reviewer@example.com";

const ESC = String.fromCharCode(27);
const plain = (s: string) => s.replace(new RegExp(`${ESC}\\[[0-9;]*m`, "g"), "");
const idOf = (v: unknown) => z.looseObject({ id: z.string() }).parse(v).id;
const ids = (v: unknown) =>
  z
    .array(z.looseObject({ id: z.string() }))
    .parse(v)
    .map((p) => p.id);

describe("quire log, diff, proposals list", () => {
  it("log is one line per commit, diffs name /dev/null as git does, proposals list shows open ones", async () => {
    const w = await copyWorld(app);
    try {
      const first = await w.repo.commit("main", { "gone.md": "old\n", "kept.md": "k\n" }, "First words");
      const second = await w.repo.commit("main", { "kept.md": "k2\n" }, "Second words\n\nthe body");
      await w.json(["clone", w.repo.repo, "c"]);

      const log = await w.run(["log"], "c", true);
      const lines = plain(log.stdout).trimEnd().split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        new RegExp(`^${second} +[0-9a-f]{7} +(just now|\\d+ seconds? ago) +${w.repo.owner} +Second words$`),
      );
      expect(lines[1]).toMatch(new RegExp(`^${first} +[0-9a-f]{7} +.* +First words$`));
      expect(log.stdout).not.toMatch(/[│┌─]|SEQ|AUTHOR/);
      const tsv = (await w.run(["log"], "c")).stdout.trimEnd().split("\n");
      expect(tsv[0]?.split("\t")).toEqual([
        String(second),
        expect.stringMatching(/^[0-9a-f]{7}$/),
        expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        w.repo.owner,
        "Second words",
      ]);

      await w.json(["branch", "feature/words"], "c");
      await w.write("c/new.md", "fresh\n");
      await w.remove("c/gone.md");
      const local = (await w.run(["diff"], "c")).stdout;
      expect(local).toContain("diff --git a/new.md b/new.md\n--- /dev/null\n+++ b/new.md\n");
      expect(local).toContain("diff --git a/gone.md b/gone.md\n--- a/gone.md\n+++ /dev/null\n");
      expect(local).not.toContain("=====");
      await w.json(["commit", "-m", "Add and remove"], "c");
      const branch = (await w.run(["diff", "--branch"], "c")).stdout;
      expect(branch).toContain("--- /dev/null\n+++ b/new.md\n");
      expect(branch).toContain("--- a/gone.md\n+++ /dev/null\n");

      const open = idOf(
        await w.json(["proposals", "open", w.repo.repo, "feature/words", "-t", "Words"], "c"),
      );
      await w.json(["branch", "feature/other"], "c");
      const closed = idOf(
        await w.json(["proposals", "open", w.repo.repo, "feature/other", "-t", "Other"], "c"),
      );
      await w.json(["proposals", "close", w.repo.repo, closed], "c");
      expect(ids(await w.json(["proposals", "list", w.repo.repo]))).toEqual([open]);
      expect(ids(await w.json(["proposals", "list", w.repo.repo, "--state", "closed"]))).toEqual([closed]);
      expect(ids(await w.json(["proposals", "list", w.repo.repo, "--state", "all"])).sort()).toEqual(
        [open, closed].sort(),
      );
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("the review commands inside a working copy", () => {
  it("take the repo and branch from the copy, and the arguments given are the last ones", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "doc.md": "doc\n" }, "start");
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "feature/here"], "c");
      await w.write("c/doc.md", "changed\n");
      const head = z.looseObject({ sequence: z.number() }).parse(await w.json(["commit", "-m", "edit"], "c"));
      await mkdir(path.join(w.dir, "c/sub"));

      const p = await w.json(["proposals", "open", "-t", "From the copy"], "c/sub");
      expect(p).toMatchObject({ repo: w.repo.repo, branch: "feature/here", title: "From the copy" });
      expect(ids(await w.json(["proposals", "list"], "c"))).toEqual([idOf(p)]);
      expect(await w.json(["proposals", "view", idOf(p)], "c")).toMatchObject({ title: "From the copy" });
      expect(await w.json(["proposals", "edit", idOf(p), "-t", "Renamed"], "c")).toMatchObject({
        title: "Renamed",
      });

      // Someone else reviews, from a copy of their own (one may not approve one's own branch).
      await w.repo.grant(REVIEWER, "writer");
      const asReviewer = async (args: string[]) =>
        runQuire(["--json", ...args], w.dir, {
          cwd: path.join(w.dir, "c"),
          env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: await app.idp.token(REVIEWER) },
        });
      const approved = await asReviewer(["reviews", "approve", "-m", "fine"]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.json()).toMatchObject({ status: "approved", sequence: head.sequence });
      const reviews = await w.json(["reviews", "list"], "c");
      expect(reviews).toEqual([expect.objectContaining({ status: "approved", body: "fine" })]);

      // One argument: the last place (the path); two: the branch and the path.
      expect(await w.json(["comments", "add", "doc.md", "-m", "here"], "c")).toMatchObject({
        branch: "feature/here",
        path: "doc.md",
      });
      expect(await w.json(["comments", "add", "main", "doc.md", "-m", "on main"], "c")).toMatchObject({
        branch: "main",
      });
      expect(await w.json(["comments", "list"], "c")).toMatchObject({ length: 1 });

      expect(await w.json(["checks", "report", "ci/lint", "--status", "passed"], "c")).toMatchObject({
        branch: "feature/here",
        check_name: "ci/lint",
      });
      expect(await w.json(["checks", "list"], "c")).toEqual([
        expect.objectContaining({ check_name: "ci/lint", status: "passed" }),
      ]);

      // Outside a copy the repo is needed, and saying so is a usage error.
      const outside = await w.run(["proposals", "list"]);
      expect(outside.code).toBe(2);
      expect(outside.stderr).toContain("missing <repo>: not inside a working copy");
      const tooFew = await w.run(["comments", "add", "-m", "x"], "c");
      expect(tooFew.code).toBe(2);
      expect(tooFew.stderr).toContain("missing <path>");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("quire open", () => {
  it("names the web page of the copy's branch, a file, a proposal, and opens $BROWSER with it", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "docs/guide.md": "g\n" }, "start");
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "feature/open"], "c");
      const base = `${app.url}/ui/repos/${w.repo.repo}`;

      const tree = await w.run(["open", "--print"], "c/docs");
      expect(tree.stdout.trim()).toBe(`${base}/-/tree?branch=feature%2Fopen`);
      const file = await w.run(["open", "guide.md", "--print"], "c/docs");
      expect(file.stdout.trim()).toBe(`${base}/-/file/docs/guide.md?branch=feature%2Fopen`);
      const p = idOf(await w.json(["proposals", "open", "-t", "Look"], "c"));
      const proposal = await w.run(["open", "--proposal", p, "--print"], "c");
      expect(proposal.stdout.trim()).toBe(`${base}/-/proposals/${p}`);
      const elsewhere = await w.run(["open", "--repo", w.repo.repo, "--print"]);
      expect(elsewhere.stdout.trim()).toBe(`${base}/-/tree`);

      // Each URL is a page the server serves.
      const token = await app.idp.token(w.repo.owner);
      for (const url of [tree, file, proposal, elsewhere].map((r) => r.stdout.trim())) {
        const page = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/html" } });
        expect(page.status, url).toBe(200);
      }

      // Without --print: $BROWSER gets the URL.
      const seen = path.join(w.dir, "browser-arg");
      const browser = path.join(w.dir, "browser.sh");
      await writeFile(browser, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
      await chmod(browser, 0o755);
      const opened = await runQuire(["open", "docs/guide.md"], w.dir, {
        cwd: path.join(w.dir, "c"),
        env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: token, BROWSER: browser, DISPLAY: undefined },
      });
      expect(opened.code).toBe(0);
      expect(opened.stderr).toContain("opened ");
      expect(await eventually(() => readFile(seen, "utf8"))).toBe(
        `${base}/-/file/docs/guide.md?branch=feature%2Fopen`,
      );

      // No browser to start (no display, no $BROWSER): the URL is printed.
      const headless = await runQuire(["open"], w.dir, {
        cwd: path.join(w.dir, "c"),
        env: { QUIRE_SERVER: app.url, QUIRE_TOKEN: token, DISPLAY: undefined, WAYLAND_DISPLAY: undefined },
      });
      expect(headless.stdout.trim()).toBe(`${base}/-/tree?branch=feature%2Fopen`);
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

/** The value once `read` stops throwing (the browser is started detached), within 10 s. */
async function eventually<T>(read: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await read();
    } catch (e) {
      if (i >= 100) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
