import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sha256hex } from "../commits/fixtures.ts";
import { startTestApp } from "../support/app.ts";
import type { RepoHandle } from "../support/world.ts";
import { useFixture } from "../support/world.ts";
import { runQuire } from "./support.ts";
import { copyWorld } from "./workcopy-support.ts";

/**
 * The audit's findings on the working copy (issue 17): a repo file under `.quire/` planted a copy
 * config naming another server, which then got QUIRE_TOKEN; a path segment over 255 bytes broke a
 * clone half-way and left a half-made folder. The server now refuses to write such paths
 * (test/commits/commit.path-rules.error.test.ts), so a repo holding one is made as an older server
 * would have left it: committed under a placeholder name, then renamed in the database.
 */

const app = useFixture(startTestApp);

/** Commits each placeholder, then renames it to its planted path; answers the sequence. */
async function plant(repo: RepoHandle, files: Record<string, string>): Promise<number> {
  const placeholders = Object.fromEntries(
    Object.entries(files).map(([, body], i) => [`plant${i}.tmp`, body]),
  );
  const seq = await repo.commit("main", placeholders, "plant");
  for (const [i, planted] of Object.keys(files).entries())
    await app.sql("UPDATE file_changes SET path = $1 WHERE repo_id = $2 AND sequence = $3 AND path = $4", [
      planted,
      repo.repoId,
      seq,
      `plant${i}.tmp`,
    ]);
  return seq;
}

/** A server that records every request and answers 404: where a planted copy.json points. */
async function elsewhere() {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    res.writeHead(404, { "content-type": "application/json" });
    res.end('{"code":"NOT_FOUND","error":"nothing here"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

const LONG = `${"é".repeat(128)}.md`;

describe("paths a working copy never writes: skipped with a warning naming them", () => {
  it("clone, pull and archive --extract leave out .quire look-alikes and over-long segments", async () => {
    const w = await copyWorld(app);
    try {
      // 70 files more: the clone takes them from one archive (64 or more), the pull file by file.
      const filler = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`fill/${i}.md`, `${i}\n`]));
      await w.repo.commit("main", { "a.md": "a\n", ...filler });
      const evil = JSON.stringify({ server: "http://127.0.0.1:9", repo: "x/y", branch: "main", sequence: 0 });
      await plant(w.repo, {
        ".quire/copy.json": evil,
        "sub/.quire/copy.json": evil,
        "docs/.QUIRE/copy.json": evil,
        [`long/${LONG}`]: "too long a name\n",
      });

      const cloned = await w.run(["clone", w.repo.repo, "c"]);
      expect(cloned.code, cloned.stderr).toBe(0);
      for (const p of [".quire/copy.json", "sub/.quire/copy.json", "docs/.QUIRE/copy.json", `long/${LONG}`])
        expect(cloned.stderr).toContain(`warning: not writing '${p}'`);
      expect(cloned.stderr).toContain("259 bytes");
      expect(await w.read("c/a.md")).toBe("a\n");
      const meta = JSON.parse(await w.read("c/.quire/copy.json"));
      expect(meta.server).toBe(app.url);
      for (const p of ["c/sub", "c/docs", "c/long"]) expect(existsSync(path.join(w.dir, p)), p).toBe(false);
      // What was left out is no local change: the copy acts as if the repo did not have it.
      const status = await w.json(["status"], "c");
      expect(status).toMatchObject({ changes: [] });

      await plant(w.repo, { "later/.quire/copy.json": evil });
      await w.repo.commit("main", { "b.md": "b\n" });
      const pulled = await w.run(["pull"], "c");
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stderr).toContain("warning: not writing 'later/.quire/copy.json'");
      expect(await w.read("c/b.md")).toBe("b\n");
      expect(existsSync(path.join(w.dir, "c/later"))).toBe(false);

      const extracted = await w.run(["archive", w.repo.repo, "--extract", "x"]);
      expect(extracted.code, extracted.stderr).toBe(0);
      expect(extracted.stderr).toContain("warning: not writing '.quire/copy.json'");
      expect(extracted.stderr).toContain("warning: not writing 'sub/.quire/copy.json'");
      expect(await w.read("x/a.md")).toBe("a\n");
      for (const p of ["x/.quire", "x/sub", "x/docs/.QUIRE", "x/later", "x/long"])
        expect(existsSync(path.join(w.dir, p)), p).toBe(false);
    } finally {
      await w.cleanup();
    }
  });

  it("status and commit ignore a .quire folder below the copy's root", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n" });
      expect((await w.run(["clone", w.repo.repo, "c"])).code).toBe(0);
      await mkdir(path.join(w.dir, "c/inner/.quire"), { recursive: true });
      await w.write("c/inner/.quire/copy.json", "{}");
      await w.write("c/new.md", "new\n");
      const status = (await w.json(["status"], "c")) as { changes: { path: string }[] };
      expect(status.changes.map((c) => c.path)).toEqual(["new.md"]);
    } finally {
      await w.cleanup();
    }
  });
});

describe("a working copy naming a server the user did not name", () => {
  it("gets no QUIRE_TOKEN (exit 2 saying how to name it); a named server wins with a warning; login needs the server named", async () => {
    const w = await copyWorld(app);
    const other = await elsewhere();
    try {
      // What `archive --extract` of a planted repo wrote before the fix: a copy naming `other`.
      const planted = path.join(w.dir, "planted");
      await mkdir(path.join(planted, ".quire"), { recursive: true });
      await writeFile(
        path.join(planted, ".quire/copy.json"),
        JSON.stringify({ server: other.url, repo: w.repo.repo, branch: "main", sequence: 0 }),
      );
      await mkdir(path.join(planted, "deep"));
      const token = await app.idp.token(w.repo.owner);

      const refused = await runQuire(["pull"], w.dir, {
        cwd: path.join(planted, "deep"),
        env: { QUIRE_TOKEN: token },
      });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`refusing to send QUIRE_TOKEN to ${other.url}`);
      expect(refused.stderr).toContain(`the working copy at ${planted}`);
      expect(refused.stderr).toContain(`--server ${other.url}`);
      expect(other.seen.filter((r) => r.headers.authorization !== undefined)).toEqual([]);

      await w.repo.commit("main", { "a.md": "a\n" });
      const named = await runQuire(["pull"], w.dir, {
        cwd: planted,
        env: { QUIRE_TOKEN: token, QUIRE_SERVER: app.url },
      });
      expect(named.code, named.stderr).toBe(0);
      expect(named.stderr).toContain(
        `warning: the working copy at ${planted} names server ${other.url}; using ${app.url} from QUIRE_SERVER`,
      );
      expect(await readFile(path.join(planted, "a.md"), "utf8")).toBe("a\n");

      const login = await runQuire(["login", "--no-browser"], w.dir, { cwd: planted });
      expect(login.code, login.stderr).toBe(2);
      expect(login.stderr).toContain(`quire login ${other.url}`);
      expect(other.seen).toEqual([]);
    } finally {
      await other.close();
      await w.cleanup();
    }
  });
});

describe("a clone that fails half-way leaves nothing behind", () => {
  /** 80 files (an archive download), the last of which the server sends with the wrong bytes. */
  async function brokenRepo(repo: RepoHandle) {
    const files = Object.fromEntries(
      Array.from({ length: 80 }, (_, i) => [`f${String(i).padStart(2, "0")}.md`, `file ${i}\n`]),
    );
    await repo.commit("main", files);
    await app.sql("UPDATE contents SET data = 'tampered' WHERE repo_id = $1 AND sha256 = decode($2, 'hex')", [
      repo.repoId,
      sha256hex("file 79\n"),
    ]);
  }

  it("into a new folder: no folder, no temporary sibling", async () => {
    const w = await copyWorld(app);
    try {
      await brokenRepo(w.repo);
      const r = await w.run(["clone", w.repo.repo, "new/c"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("download of 'f79.md' has SHA-256");
      expect(existsSync(path.join(w.dir, "new"))).toBe(false);
      expect((await readdir(w.dir)).filter((n) => n.includes("clone"))).toEqual([]);
    } finally {
      await w.cleanup();
    }
  });

  it("a file that cannot be written (a path that is also a folder): no folder", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n", x: "a file\n", "x/y.md": "under the file\n" });
      const r = await w.run(["clone", w.repo.repo, "c"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("cannot write 'x");
      expect(r.stderr).toContain("a file and a folder at the same path");
      expect(r.stderr).not.toContain(".clone-");
      expect(existsSync(path.join(w.dir, "c"))).toBe(false);
      expect((await readdir(w.dir)).filter((n) => n.includes("clone"))).toEqual([]);
    } finally {
      await w.cleanup();
    }
  });

  it("into an empty folder the user made: the folder stays, empty", async () => {
    const w = await copyWorld(app);
    try {
      await brokenRepo(w.repo);
      await mkdir(path.join(w.dir, "mine"));
      const r = await w.run(["clone", w.repo.repo, "mine"]);
      expect(r.code).toBe(1);
      expect(await readdir(path.join(w.dir, "mine"))).toEqual([]);
    } finally {
      await w.cleanup();
    }
  });
});
