import { spawn } from "node:child_process";
import { chmod, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { cliBin } from "./support.ts";
import { copyWorld } from "./workcopy-support.ts";

const app = useFixture(startTestApp);
type World = Awaited<ReturnType<typeof copyWorld>>;

const lines = (...ls: string[]) => ls.map((l) => `${l}\n`).join("");
const statusJson = z.looseObject({
  changes: z.array(z.looseObject({ path: z.string(), status: z.string() })),
  conflicts: z.array(z.object({ path: z.string(), kind: z.string(), remote: z.string() })),
});

const fileOn = async (w: World, p: string, branch = "main") => {
  const res = await api(w.repo.client).get("/repos/:repo*/-/file/:path*", {
    params: { repo: w.repo.repo, path: p },
    query: { branch },
  });
  return res.ok ? Buffer.from(res.body.content, "base64").toString() : null;
};

const headOf = async (w: World, b = "main") =>
  okBody(
    await api(w.repo.client).get("/repos/:repo*/-/branch/:branch*", {
      params: { repo: w.repo.repo, branch: b },
    }),
  ).head_sequence;

describe("quire pull merges, as git does", () => {
  it("merges a colleague's change to other lines of a file I edited, and then commits", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "doc.md": lines("1", "2", "3", "4", "5", "6") });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.write("c/doc.md", lines("1 mine", "2", "3", "4", "5", "6"));
      const theirs = await w.repo.commit("main", { "doc.md": lines("1", "2", "3", "4", "5", "6 theirs") });

      const refused = await w.run(["commit", "-m", "mine"], "c");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("quire pull");
      expect(refused.stderr).toContain("merged line by line");

      const pulled = await w.run(["pull"], "c");
      expect(pulled.code).toBe(0);
      expect(pulled.stdout).toContain("merged your changes with 'main''s in: doc.md");
      expect(await w.read("c/doc.md")).toBe(lines("1 mine", "2", "3", "4", "5", "6 theirs"));
      const st = statusJson.parse(await w.json(["status"], "c"));
      expect(st).toMatchObject({ sequence: theirs, conflicts: [] });
      expect(st.changes.map((c) => [c.path, c.status])).toEqual([["doc.md", "modified"]]);

      await w.json(["commit", "-m", "mine"], "c");
      expect(await fileOn(w, "doc.md")).toBe(lines("1 mine", "2", "3", "4", "5", "6 theirs"));
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("leaves overlapping edits as conflict markers that status shows, commit refuses and resolve clears", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "doc.md": lines("a", "b", "c"), "gone.md": "x\n", "kept.md": "k\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.write("c/doc.md", lines("a", "b mine", "c"));
      await w.remove("c/gone.md");
      await w.write("c/kept.md", "k mine\n");
      const head = await w.repo.commit("main", {
        "doc.md": lines("a", "b theirs", "c"),
        "gone.md": "x theirs\n",
        "kept.md": null,
      });

      const pulled = await w.run(["pull"], "c");
      expect(pulled.code).toBe(1);
      expect(pulled.stderr).toContain("the pull left 3 path(s) in conflict");
      expect(pulled.stderr).toContain("quire resolve <path>");
      expect(pulled.stdout).toContain("doc.md (both changed)");
      expect(pulled.stdout).toContain("gone.md (deleted locally, changed remotely)");
      expect(pulled.stdout).toContain("kept.md (changed locally, deleted remotely)");
      expect(await w.read("c/doc.md")).toBe(
        lines("a", "<<<<<<< local", "b mine", "=======", "b theirs", `>>>>>>> main@${head}`, "c"),
      );
      expect(await w.read("c/gone.md")).toBe("x theirs\n");
      expect(await w.read("c/kept.md")).toBe("k mine\n");

      const st = await w.run(["status"], "c");
      expect(st.stdout).toContain("3 path(s) in conflict from the last pull");
      expect(st.stdout).toContain(`doc.md (both changed; remote side main@${head})`);

      const commitRefused = await w.run(["commit", "-m", "too soon"], "c");
      expect(commitRefused.code).toBe(1);
      expect(commitRefused.stderr).toContain("cannot commit: 3 path(s) still in conflict");
      expect(await headOf(w)).toBe(head);

      const markers = await w.run(["resolve", "doc.md"], "c");
      expect(markers.code).toBe(1);
      expect(markers.stderr).toContain("still holding conflict markers: doc.md");

      await w.write("c/doc.md", lines("a", "b both", "c"));
      await w.remove("c/gone.md");
      const resolved = z
        .object({ resolved: z.array(z.looseObject({ path: z.string() })), remaining: z.array(z.unknown()) })
        .parse(await w.json(["resolve"], "c"));
      expect(resolved.resolved.map((c) => c.path)).toEqual(["doc.md", "gone.md", "kept.md"]);
      expect(resolved.remaining).toEqual([]);
      expect(statusJson.parse(await w.json(["status"], "c")).conflicts).toEqual([]);
      await w.json(["commit", "-m", "merged"], "c");
      expect(await fileOn(w, "doc.md")).toBe(lines("a", "b both", "c"));
      expect(await fileOn(w, "gone.md")).toBeNull();
      expect(await fileOn(w, "kept.md")).toBe("k mine\n");
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("names a binary file changed on both sides as a whole-file conflict and keeps the local bytes", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "img.bin": Buffer.from([0, 1, 2, 3]) });
      await w.json(["clone", w.repo.repo, "c"]);
      await writeFile(path.join(w.dir, "c/img.bin"), Buffer.from([0, 9, 9, 9]));
      await w.repo.commit("main", { "img.bin": Buffer.from([0, 7, 7, 7]) });
      const pulled = await w.run(["pull"], "c");
      expect(pulled.code).toBe(1);
      expect(pulled.stdout).toContain("img.bin (binary, both changed)");
      expect([...(await readFile(path.join(w.dir, "c/img.bin")))]).toEqual([0, 9, 9, 9]);
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("quire switch --merge", () => {
  it("carries local changes to a branch that changed the same file, where plain switch refuses", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "doc.md": lines("1", "2", "3", "4", "5", "6") });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "topic"], "c");
      await w.write("c/doc.md", lines("1 mine", "2", "3", "4", "5", "6"));
      await w.repo.commit("main", { "doc.md": lines("1", "2", "3", "4", "5", "6 main") });

      const refused = await w.run(["switch", "main"], "c");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("doc.md");
      expect(refused.stderr).toContain("`quire switch --merge main`");

      const switched = await w.run(["switch", "--merge", "main"], "c");
      expect(switched.code).toBe(0);
      expect(switched.stdout).toContain("merged your changes with 'main''s in: doc.md");
      expect(await w.read("c/doc.md")).toBe(lines("1 mine", "2", "3", "4", "5", "6 main"));
      const st = statusJson.parse(await w.json(["status"], "c"));
      expect(st).toMatchObject({ branch: "main", sequence: await headOf(w), conflicts: [] });
      expect(st.changes.map((c) => [c.path, c.status])).toEqual([["doc.md", "modified"]]);
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("quire commit --force", () => {
  it("names each path whose remote change it discards, and without a terminal needs --yes", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n", "b.md": "b\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.write("c/a.md", "a mine\n");
      await w.repo.commit("main", { "a.md": "a colleague\n", "b.md": "b colleague\n" });

      const refused = await w.run(["commit", "-m", "over", "--force"], "c");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("--force replaces those changes with yours:\n  a.md\n");
      expect(refused.stderr).not.toMatch(/^ {2}b\.md$/m);
      expect(refused.stderr).toContain("add --yes");
      expect(await fileOn(w, "a.md")).toBe("a colleague\n");

      const forced = await w.run(["commit", "-m", "over", "--force", "--yes"], "c");
      expect(forced.code).toBe(0);
      expect(forced.stderr).toContain("  a.md");
      expect(await fileOn(w, "a.md")).toBe("a mine\n");
      expect(await fileOn(w, "b.md")).toBe("b colleague\n");
      expect(await w.read("c/b.md")).toBe("b colleague\n");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("a working copy on a merged branch", () => {
  it("status says the branch was merged, and commit suggests switching to main and a new branch", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "done"], "c");
      await w.write("c/a.md", "a done\n");
      await w.json(["commit", "-m", "work"], "c");
      await w.json(["merge"], "c");
      await w.write("c/a.md", "a more\n");

      const st = await w.run(["status"], "c");
      expect(st.stdout).toContain("'done' was merged into main: it takes no more commits");
      expect(st.stdout).toContain("`quire switch main`, then `quire branch <new-name>`");
      expect(st.stderr).not.toContain("commit them with");

      const refused = await w.run(["commit", "-m", "late"], "c");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("'done' was merged into main: it takes no more commits");
      expect(refused.stderr).toContain("`quire switch main`");
      expect(refused.stderr).toContain("`quire branch <new-name>`");

      await w.json(["switch", "main"], "c");
      await w.json(["branch", "next"], "c");
      await w.json(["commit", "-m", "carried over"], "c");
      expect(await fileOn(w, "a.md", "next")).toBe("a more\n");

      // Deleted (abandoned) is said as such.
      await api(w.repo.client).delete("/repos/:repo*/-/branch/:branch*", {
        params: { repo: w.repo.repo, branch: "next" },
      });
      const gone = await w.run(["status"], "c");
      expect(gone.stdout).toContain("'next' was abandoned: it takes no more commits");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("quire commit without -m", () => {
  it("opens $EDITOR on a terminal, leaves out the # lines, aborts on an empty message, refuses without a terminal", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.write("c/a.md", "a edited\n");

      const noTty = await w.run(["commit"], "c");
      expect(noTty.code).toBe(2);
      expect(noTty.stderr).toContain("no commit message: pass -m <message>");

      // The editor keeps what it was shown (to check the help lines) and writes a message on top.
      const editor = path.join(w.dir, "editor.sh");
      await writeFile(
        editor,
        `#!/bin/sh\ncp "$1" "${w.dir}/shown.txt"\n[ -z "$MSG" ] && exit 0\n{ printf '%s\\n\\n%s\\n' "$MSG" 'second para'; cat "$1"; } > "$1.new" && mv "$1.new" "$1"\n`,
      );
      await chmod(editor, 0o755);

      const empty = await w.run(["commit"], "c", true, { EDITOR: editor, MSG: "" });
      expect(empty.code).toBe(1);
      expect(empty.stdout).toContain("aborting the commit: the message is empty");

      const before = await headOf(w);
      const done = await w.run(["commit"], "c", true, {
        EDITOR: editor,
        VISUAL: "",
        MSG: "Edit a in the editor",
      });
      expect(done.code).toBe(0);
      const shown = await readFile(path.join(w.dir, "shown.txt"), "utf8");
      expect(shown).toContain("# Write the message for your commit to 'main'");
      expect(shown).toMatch(/#\tmodified: +a\.md/);
      const c = okBody(
        await api(w.repo.client).get("/repos/:repo*/-/commit/:sequence", {
          params: { repo: w.repo.repo, sequence: String(before + 1) },
        }),
      );
      expect(c.message).toBe("Edit a in the editor\n\nsecond para");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("quire commit --force on a terminal", () => {
  it("asks before discarding, and commits only on yes", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.write("c/a.md", "a mine\n");
      await w.repo.commit("main", { "a.md": "a colleague\n" });

      const no = await answerOnTty(w, ["commit", "-m", "over", "--force"], "n");
      expect(no.output).toContain("Discard them? [y/N]");
      expect(no.code).toBe(1);
      expect(await fileOn(w, "a.md")).toBe("a colleague\n");

      const yes = await answerOnTty(w, ["commit", "-m", "over", "--force"], "y");
      expect(yes.output).toContain("  a.md");
      expect(yes.code).toBe(0);
      expect(await fileOn(w, "a.md")).toBe("a mine\n");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

/** Runs quire in the copy `c` on a pseudo-terminal (script(1)), typing `answer` at its question. */
async function answerOnTty(
  w: World,
  args: string[],
  answer: string,
): Promise<{ code: number; output: string }> {
  const token = await app.idp.token(w.repo.owner);
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, await cliBin(), ...args].map(quote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd: path.join(w.dir, "c"),
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: w.dir,
      TERM: "dumb",
      QUIRE_SERVER: app.url,
      QUIRE_TOKEN: token,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  let answered = false;
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
    if (!answered && output.includes("[y/N]")) {
      answered = true;
      child.stdin.write(`${answer}\r`);
    }
  });
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
  return { code, output: output.replace(/\r\n/g, "\n") };
}
