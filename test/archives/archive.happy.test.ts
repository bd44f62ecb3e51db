import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";
import { archiveOf, byteOrder, downloadAs, filesOf, sha256hex, treeOf, untar } from "./fixtures.ts";

const app = useFixture(startTestApp);

const archivePath = (fx: RepoFixture, query = "") => `${fx.base}/archive${query}`;

async function commitTime(fx: RepoFixture, sequence: number): Promise<Date> {
  const res = await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
    params: { repo: fx.repo, sequence: String(sequence) },
  });
  const t = new Date(okBody(res).created_at).getTime();
  return new Date(Math.floor(t / 1000) * 1000);
}

describe("GET /repos/{name}/-/archive", () => {
  it("holds every file of the tree, byte for byte, in path byte order under one folder, as plain 0644 files", async () => {
    const fx = await repoWithOwner(app);
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 1_000; i++)
      files[`pages/p${String(i).padStart(4, "0")}.md`] = Buffer.from(`# page ${i}\n${"x".repeat(i % 37)}\n`);
    await commit(fx, "main", files, "bulk");
    const extra: Record<string, Buffer> = {
      "README.md": Buffer.from("hello\n"),
      "bin/blob.dat": Buffer.concat([Buffer.from([0, 1, 2, 255]), randomBytes(5_000)]),
      "empty.txt": Buffer.alloc(0),
      "a/b/c/d/e/deep.txt": Buffer.from("deep\n"),
      "Z-upper.txt": Buffer.from("upper case sorts before lower case in byte order\n"),
    };
    const head = await commit(fx, "main", extra, "extras");
    Object.assign(files, extra);

    const res = await downloadAs(app, fx.owner, archivePath(fx));
    const folder = `docs-${head}`;
    const entries = await archiveOf(res, `${folder}.tar.gz`);
    expect(entries).toHaveLength(1_005);
    expect(entries.map((e) => e.name)).toEqual(byteOrder(entries.map((e) => e.name)));
    const mtime = await commitTime(fx, head);
    for (const e of entries) {
      expect(e.type).toBe("file");
      expect(e.mode).toBe(0o644);
      expect([e.uid, e.gid, e.uname, e.gname]).toEqual([0, 0, "", ""]);
      expect(e.mtime?.getTime()).toBe(mtime.getTime());
      expect(e.size).toBe(e.data.length);
      expect(e.name).not.toMatch(/(^\/)|(^|\/)\.\.(\/|$)/);
    }
    const archived = filesOf(entries, folder);
    expect([...archived.keys()].sort()).toEqual(Object.keys(files).sort());
    for (const [p, data] of Object.entries(files)) expect(archived.get(p)?.equals(data), p).toBe(true);
    // And against the tree endpoint: same paths, and each file's bytes hash to its version_id.
    const tree = await treeOf(fx);
    expect([...archived.keys()].sort()).toEqual([...tree.keys()].sort());
    for (const [p, data] of archived) expect(sha256hex(data), p).toBe(tree.get(p));
  });

  it("ends cleanly when the tree is an exact number of pages", async () => {
    const fx = await repoWithOwner(app);
    const files: Record<string, string> = {};
    for (let i = 0; i < 500; i++) files[`f${String(i).padStart(3, "0")}.txt`] = `file ${i}\n`;
    const head = await commit(fx, "main", files);
    const entries = await archiveOf(await downloadAs(app, fx.owner, archivePath(fx)), `docs-${head}.tar.gz`);
    expect(entries).toHaveLength(500);
    expect(entries.at(-1)!.name).toBe(`docs-${head}/f499.txt`);
  });

  it("gives the same bytes for the same request every time, with a gzip header that has no time or name", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.txt": "a\n", "b/c.txt": "c\n", "big.bin": randomBytes(100_000) });
    // Commits later than the pinned sequence must not change the answer either.
    const pinned = await commit(fx, "main", { "d.txt": "d\n" });
    const first = await downloadAs(app, fx.owner, archivePath(fx, `?at=${pinned}`));
    await commit(fx, "main", { "a.txt": "changed\n" });
    const second = await downloadAs(app, fx.owner, archivePath(fx, `?branch=main&at=${pinned}`));
    expect(first.status).toBe(200);
    expect(sha256hex(second.bytes)).toBe(sha256hex(first.bytes));
    expect(first.bytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(first.bytes[3]).toBe(0); // FLG: no file name, comment or extra field
    expect(first.bytes.readUInt32LE(4)).toBe(0); // MTIME
  });

  it("lays a branch over main at its base, and names the folder after the branch", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n" });
    await createBranch(fx, "feature/x");
    await commit(fx, "feature/x", { "b.txt": "b-branch\n", "c.txt": null, "d.txt": "d-branch\n" });
    const branchHead = await commit(fx, "feature/x", { "e/f.txt": "f-branch\n" });
    const mainHead = await commit(fx, "main", { "a.txt": "a2 on main after the branch\n", "g.txt": "g\n" });

    const folder = `docs-feature-x-${branchHead}`;
    const entries = await archiveOf(
      await downloadAs(app, fx.owner, archivePath(fx, "?branch=feature/x")),
      `${folder}.tar.gz`,
    );
    const files = filesOf(entries, folder);
    expect(Object.fromEntries([...files].map(([p, d]) => [p, d.toString("utf8")]))).toEqual({
      "a.txt": "a1\n",
      "b.txt": "b-branch\n",
      "d.txt": "d-branch\n",
      "e/f.txt": "f-branch\n",
    });
    expect((await treeOf(fx, "&branch=feature/x")).size).toBe(4);

    const main = filesOf(
      await archiveOf(await downloadAs(app, fx.owner, archivePath(fx)), `docs-${mainHead}.tar.gz`),
      `docs-${mainHead}`,
    );
    expect([...main.keys()]).toEqual(["a.txt", "b.txt", "c.txt", "g.txt"]);
    expect(main.get("a.txt")!.toString()).toBe("a2 on main after the branch\n");
  });

  it("pins old content with at, and at=0 is an empty archive dated at the epoch", async () => {
    const fx = await repoWithOwner(app);
    const v1 = await commit(fx, "main", { "doc.md": "version 1\n", "gone.md": "soon deleted\n" });
    await commit(fx, "main", { "doc.md": "version 2\n", "gone.md": null, "new.md": "new\n" });

    const old = filesOf(
      await archiveOf(await downloadAs(app, fx.owner, archivePath(fx, `?at=${v1}`)), `docs-${v1}.tar.gz`),
      `docs-${v1}`,
    );
    expect(Object.fromEntries([...old].map(([p, d]) => [p, d.toString()]))).toEqual({
      "doc.md": "version 1\n",
      "gone.md": "soon deleted\n",
    });

    const empty = await downloadAs(app, fx.owner, archivePath(fx, "?at=0"));
    expect(await archiveOf(empty, "docs-0.tar.gz")).toEqual([]);
  });

  it("keeps paths longer than tar's 100-byte name field and multi-byte UTF-8 names exact", async () => {
    const fx = await repoWithOwner(app);
    const longPath = `${"segment-".repeat(12)}/${"deeper-".repeat(15)}/${"x".repeat(95)}.txt`;
    expect(Buffer.byteLength(longPath)).toBeGreaterThanOrEqual(300);
    const longName = `${"n".repeat(200)}.md`; // one segment: ustar's prefix split cannot help
    const files: Record<string, string> = {
      [longPath]: "long path\n",
      [longName]: "long name\n",
      "ドキュメント/説明.md": "日本語\n",
      "café/naïve résumé.txt": "accents\n",
      "emoji/🚀 launch.md": "rocket\n",
      [`${"é".repeat(60)}.txt`]: "120 bytes of name in 60 characters\n",
    };
    const head = await commit(fx, "main", files);
    const res = await downloadAs(app, fx.owner, archivePath(fx));
    const folder = `docs-${head}`;
    const archived = filesOf(await archiveOf(res, `${folder}.tar.gz`), folder);
    expect(Object.fromEntries([...archived].map(([p, d]) => [p, d.toString()]))).toEqual(files);

    // GNU tar (or whatever `tar` is installed) reads the pax names the same way.
    const tar = spawnSync("tar", ["--version"]);
    if (tar.status !== 0) return;
    const dir = await mkdtemp(path.join(tmpdir(), "quire-archive-"));
    try {
      const out = spawnSync("tar", ["-xzf", "-", "-C", dir], { input: res.bytes });
      expect(out.status, out.stderr?.toString()).toBe(0);
      for (const [p, text] of Object.entries(files))
        expect(await readFile(path.join(dir, folder, p), "utf8"), p).toBe(text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is also answered to a plain reader and an org member", async () => {
    const fx = await repoWithOwner(app);
    const head = await commit(fx, "main", { "r.txt": "r\n" });
    const reader = `reader-${fx.org}@example.com`;
    expect((await fx.client.put(`${fx.base}/roles/${reader}`, { role: "reader" })).status).toBe(200);
    const member = `member-${fx.org}@example.com`;
    expect((await fx.client.post(`/orgs/${fx.org}/members/${member}`, { role: "member" })).status).toBe(201);
    for (const who of [reader, member]) {
      const entries = await archiveOf(await downloadAs(app, who, archivePath(fx)), `docs-${head}.tar.gz`);
      expect(entries.map((e) => e.name)).toEqual([`docs-${head}/r.txt`]);
    }
  });

  it("names the folder after the last segment of a nested repo name", async () => {
    const fx = await repoWithOwner(app);
    const nested = `${fx.org}/team/handbook`;
    expect((await fx.client.post("/repos", { owner: fx.org, name: nested })).status).toBe(201);
    const seq = okBody(
      await api(fx.client).post("/repos/:repo*/-/commit", {
        params: { repo: nested },
        body: {
          branch: "main",
          message: "m",
          files: [{ path: "x.md", content: Buffer.from("x").toString("base64") }],
        },
      }),
    ).sequence;
    const res = await downloadAs(app, fx.owner, `/repos/${nested}/-/archive`);
    const entries = await archiveOf(res, `handbook-${seq}.tar.gz`);
    expect(entries.map((e) => e.name)).toEqual([`handbook-${seq}/x.md`]);
  });
});

describe("archives with bodies in the blob store", () => {
  let blobApp: TestApp;
  beforeAll(async () => {
    blobApp = await startTestApp({ SVC_BLOB_THRESHOLD_BYTES: "1024" });
  });
  afterAll(async () => {
    await blobApp?.close();
  });

  it("streams large bodies from the blob store next to inline ones", async () => {
    const fx = await repoWithOwner(blobApp);
    const files: Record<string, Buffer> = {
      "large/one.bin": randomBytes(300_000),
      "large/two.bin": randomBytes(2_000),
      "small/inline.txt": Buffer.from("inline\n"),
      "small/edge.txt": Buffer.alloc(1024, "e"), // exactly the threshold: stays inline
    };
    await commit(fx, "main", files);
    // One blob at two paths (a later commit reuses the stored body).
    const again = { "same-as-one.bin": files["large/one.bin"]! };
    const head = await commit(fx, "main", again);
    Object.assign(files, again);
    const rows = await blobApp.sql<{ blob: boolean; n: number }>(
      "SELECT blob_key IS NOT NULL AS blob, count(*)::int AS n FROM contents WHERE repo_id = $1 GROUP BY 1 ORDER BY 1",
      [fx.repoId],
    );
    expect(rows).toEqual([
      { blob: false, n: 2 },
      { blob: true, n: 2 },
    ]);
    const res = await downloadAs(blobApp, fx.owner, `${fx.base}/archive`);
    const archived = filesOf(await archiveOf(res, `docs-${head}.tar.gz`), `docs-${head}`);
    expect([...archived.keys()]).toEqual(byteOrder(Object.keys(files)));
    for (const [p, data] of Object.entries(files)) expect(archived.get(p)?.equals(data), p).toBe(true);
    expect(await untar(res.bytes)).toHaveLength(5);
  });
});
