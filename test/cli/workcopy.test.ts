import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { type RepoHandle, useFixture } from "../support/world.ts";
import { copyWorld } from "./workcopy-support.ts";

const app = useFixture(startTestApp);

/** What `quire --json` prints, as far as these tests read it (parsing keeps every other field). */
const changed = z.looseObject({ changes: z.array(z.looseObject({ path: z.string(), status: z.string() })) });
const withSequence = z.looseObject({ sequence: z.number() });

const headOf = async (repo: RepoHandle, b = "main") =>
  okBody(
    await api(repo.client).get("/repos/:repo*/-/branch/:branch*", { params: { repo: repo.repo, branch: b } }),
  ).head_sequence;

describe("quire clone, status, commit, pull", () => {
  it("clones at a sequence, finds edits, additions and deletions, and refuses a commit over a moved branch unless forced", async () => {
    const w = await copyWorld(app);
    try {
      // Paths the URL must carry with care (docs/names.md): a `-` segment, a last segment `history`.
      const odd = { "odd/-/dash.md": "dash\n", "odd/history": "not the history route\n" };
      const s1 = await w.repo.commit("main", { "a.md": "one\n", "dir/b.md": "bee\n", ...odd }, "first");
      await w.repo.commit("main", { "a.md": "two\n" }, "second");

      const cloned = await w.json(["clone", w.repo.repo, "c", "--at", String(s1)]);
      expect(cloned).toMatchObject({ repo: w.repo.repo, branch: "main", sequence: s1, files: 4 });
      expect(await w.read("c/odd/-/dash.md")).toBe("dash\n");
      expect(await w.read("c/odd/history")).toBe("not the history route\n");
      expect(await w.read("c/a.md")).toBe("one\n");
      expect(await w.read("c/dir/b.md")).toBe("bee\n");
      const meta = JSON.parse(await readFile(path.join(w.dir, "c/.quire/copy.json"), "utf8"));
      expect(meta).toEqual({ server: app.url, repo: w.repo.repo, branch: "main", sequence: s1 });
      expect(await w.json(["status"], "c")).toMatchObject({ changes: [] });

      await w.write("c/a.md", "mine\n");
      await w.write("c/new.md", "new\n");
      await w.remove("c/dir/b.md");
      const status = changed.parse(await w.json(["status"], "c"));
      expect(status.changes.map((c) => [c.path, c.status])).toEqual([
        ["a.md", "modified"],
        ["dir/b.md", "deleted"],
        ["new.md", "added"],
      ]);
      const onTty = await w.run(["status"], "c", true);
      expect(onTty.stdout).toContain("\u001b[");
      expect(onTty.stdout).toMatch(/M a\.md/);

      const head = await headOf(w.repo);
      const refused = await w.run(["commit", "-m", "over"], "c");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`moved to sequence ${head}`);
      expect(refused.stderr).toContain("quire pull");
      expect(await headOf(w.repo)).toBe(head);

      const forced = withSequence.parse(await w.json(["commit", "-m", "forced", "--force", "--yes"], "c"));
      expect(forced).toMatchObject({ branch: "main", files: 3 });
      expect(forced.sequence).toBeGreaterThan(head);
      const c = okBody(
        await api(w.repo.client).get("/repos/:repo*/-/commit/:sequence", {
          params: { repo: w.repo.repo, sequence: String(forced.sequence) },
        }),
      );
      expect(c.files.map((f) => f.path)).toEqual(["a.md", "dir/b.md", "new.md"]);
      expect(await w.json(["status"], "c")).toMatchObject({ changes: [] });
      expect(existsSync(path.join(w.dir, "c/new.md"))).toBe(true);
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("commits conditionally, and pull fast-forwards while keeping unrelated local changes", async () => {
    const w = await copyWorld(app);
    try {
      // 210 files: clone takes them from one archive download, and a terminal shows a progress bar.
      const many = Object.fromEntries(
        Array.from({ length: 210 }, (_, i) => [`many/f${i}.md`, `file ${i}\n`]),
      );
      await w.repo.commit("main", { "a.md": "a\n", "b.md": "b\n", ...many });
      expect(await w.json(["clone", w.repo.repo, "c"])).toMatchObject({ files: 212 });
      expect(await w.read("c/many/f209.md")).toBe("file 209\n");
      const onTty = await w.run(["clone", w.repo.repo, "t"], "", true);
      expect(onTty.code).toBe(0);
      expect(onTty.stdout).toMatch(/fetching .* \d+\/212 files/);
      expect(onTty.stdout).toContain("212 files");
      await w.write("c/a.md", "a2\n");
      const committed = withSequence.parse(await w.json(["commit", "-m", "edit a"], "c"));
      expect(committed.sequence).toBe(await headOf(w.repo));
      const file = okBody(
        await api(w.repo.client).get("/repos/:repo*/-/file/:path*", {
          params: { repo: w.repo.repo, path: "a.md" },
        }),
      );
      expect(Buffer.from(file.content, "base64").toString()).toBe("a2\n");

      const other = await w.repo.commit("main", { "b.md": "b2\n", "c.md": "c\n" }, "elsewhere");
      await w.write("c/a.md", "local\n");
      const pulled = await w.json(["pull"], "c");
      expect(pulled).toMatchObject({ sequence: other, written: 2, removed: 0, kept: 1 });
      expect(await w.read("c/b.md")).toBe("b2\n");
      expect(await w.read("c/c.md")).toBe("c\n");
      expect(await w.read("c/a.md")).toBe("local\n");
      expect(changed.parse(await w.json(["status"], "c")).changes).toEqual([
        { path: "a.md", status: "modified", sha256: expect.any(String) },
      ]);
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("quire branch, switch, diff, log, show", () => {
  it("creates a branch from main, diffs locally and against main, logs and shows commits, switches back", async () => {
    const w = await copyWorld(app);
    try {
      const base = await w.repo.commit("main", { "doc.md": "line 1\nline 2\n" }, "start");
      await w.json(["clone", w.repo.repo, "c"]);
      expect(await w.json(["branch", "feature/x"], "c")).toMatchObject({
        branch: "feature/x",
        sequence: base,
      });

      await w.write("c/doc.md", "line 1\nline two\n");
      const local = await w.run(["diff"], "c");
      expect(local.code).toBe(0);
      expect(local.stdout).toContain("-line 2");
      expect(local.stdout).toContain("+line two");
      const coloured = await w.run(["diff"], "c", true);
      expect(coloured.stdout).toContain("\u001b[32m+line two");

      const seq = withSequence.parse(await w.json(["commit", "-m", "reword"], "c")).sequence;
      const branchDiff = changed.parse(await w.json(["diff", "--branch"], "c"));
      expect(branchDiff.changes).toEqual([
        { path: "doc.md", status: "modified", patch: expect.stringContaining("+line two") },
      ]);

      const log = z
        .array(z.looseObject({ sequence: z.number(), branch: z.string() }))
        .parse(await w.json(["log"], "c"));
      expect(log.map((e) => [e.sequence, e.branch])).toEqual([
        [seq, "feature/x"],
        [base, "main"],
      ]);
      const logTty = await w.run(["log"], "c", true);
      expect(logTty.stdout).toContain("reword");

      const shown = z
        .looseObject({ files: z.array(z.unknown()) })
        .parse(await w.json(["show", String(seq), "--patch"], "c"));
      expect(shown).toMatchObject({
        sequence: seq,
        branch: "feature/x",
        message: "reword",
        author: w.repo.owner,
      });
      expect(shown.files).toEqual([
        {
          path: "doc.md",
          version_id: expect.any(String),
          status: "modified",
          patch: expect.stringContaining("+line two"),
        },
      ]);

      const listed = await w.run(["branch"], "c");
      expect(listed.stdout).toMatch(/\*\tfeature\/x/);
      expect(await w.json(["switch", "main"], "c")).toMatchObject({
        branch: "main",
        sequence: base,
        written: 1,
      });
      expect(await w.read("c/doc.md")).toBe("line 1\nline 2\n");
      const missing = await w.run(["switch", "nope"], "c");
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("quire branch nope");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});
