import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TreeResponse } from "../../shared/api/content.ts";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner, sha256hex } from "./fixtures.ts";

const app = useFixture(startTestApp);

const tree = async (fx: Awaited<ReturnType<typeof repoWithOwner>>, q = "") =>
  ((await fx.client.get(`${fx.base}/tree${q}`)).body as TreeResponse).entries;

describe("a commit", () => {
  it("writes all of its files at one sequence and answers 201 {sequence}", async () => {
    const fx = await repoWithOwner(app);
    const res = await api(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "main",
        message: "three at once",
        files: [
          { path: "docs/a.md", content: b64("alpha") },
          { path: "docs/b.md", content: b64("beta") },
          { path: "c.txt", content: b64("gamma") },
        ],
      },
    });
    expectOk(res, 201);
    expect(res.body).toMatchObject({ sequence: 1, branch: "main", message: "three at once" });
    const rows = await app.sql("SELECT DISTINCT sequence FROM file_changes WHERE repo_id = $1", [fx.repoId]);
    expect(rows).toEqual([{ sequence: 1 }]);
    expect((await tree(fx)).map((e) => e.path)).toEqual(["c.txt", "docs/a.md", "docs/b.md"]);
    const f = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: "docs/b.md" },
    });
    expectOk(f, 200);
    expect(Buffer.from(f.body.content, "base64").toString()).toBe("beta");
  });

  it("round-trips arbitrary bytes through base64", async () => {
    const fx = await repoWithOwner(app);
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await commit(fx, "main", { "all-bytes.bin": bytes, "empty.txt": "" });
    const f = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: "all-bytes.bin" },
    });
    expectOk(f, 200);
    expect(Buffer.from(f.body.content, "base64").equals(bytes)).toBe(true);
    const empty = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: "empty.txt" },
    });
    expectOk(empty, 200);
    expect(empty.body).toMatchObject({ content: "", version_id: sha256hex("") });
  });

  it("deletes a file when content is null or omitted", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a", "b.md": "b", "c.md": "c" });
    const res = await api(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "main",
        message: "remove two",
        files: [{ path: "a.md", content: null }, { path: "b.md" }],
      },
    });
    expectOk(res, 201);
    expect((await tree(fx)).map((e) => e.path)).toEqual(["c.md"]);
    expect(
      (await api(fx.client).get("/repos/:repo*/-/file/:path*", { params: { repo: fx.repo, path: "a.md" } }))
        .status,
    ).toBe(404);
    expect(
      (await api(fx.client).get("/repos/:repo*/-/file/:path*", { params: { repo: fx.repo, path: "b.md" } }))
        .status,
    ).toBe(404);
  });

  it("stores a given content_type and returns it in tree and file", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", [
      { path: "notes.md", content: b64("# hi"), content_type: "text/x-custom; charset=utf-8" },
      { path: "plain.md", content: b64("# plain") },
    ]);
    const entries = await tree(fx);
    expect(entries.find((e) => e.path === "notes.md")!.content_type).toBe("text/x-custom; charset=utf-8");
    expect(entries.find((e) => e.path === "plain.md")!.content_type).toMatch(/^text\/markdown/);
    const f = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: "notes.md" },
    });
    expectOk(f, 200);
    expect(f.body.content_type).toBe("text/x-custom; charset=utf-8");
  });

  it("is authored by the caller: an author in the body is ignored (docs/api.md)", async () => {
    const fx = await repoWithOwner(app);
    const res = await unchecked(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "main",
        message: "spoof",
        author: "mallory@example.com",
        files: [{ path: "a.md", content: b64("x") }],
      },
    });
    expectOk(res, 201);
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
          params: { repo: fx.repo, sequence: String((res.body as { sequence: number }).sequence) },
        }),
      ).author,
    ).toBe(fx.owner);
    const [row] = await app.sql("SELECT author FROM commits WHERE repo_id = $1", [fx.repoId]);
    expect(row).toEqual({ author: fx.owner });
  });

  it("numbers commits 1, 2, 3 ... per repo, across branches", async () => {
    const fx = await repoWithOwner(app);
    const other = await repoWithOwner(app);
    const seqs = [await commit(fx, "main", { "a.md": "1" })];
    await createBranch(fx, "side");
    seqs.push(await commit(fx, "side", { "b.md": "2" }));
    seqs.push(await commit(fx, "main", { "a.md": "3" }));
    seqs.push(await commit(fx, "side", { "b.md": "4" }));
    expect(seqs).toEqual([1, 2, 3, 4]);
    expect(await commit(other, "main", { "z.md": "other repo" })).toBe(1);
    const [repo] = await app.sql("SELECT last_sequence FROM repos WHERE id = $1", [fx.repoId]);
    expect(repo).toEqual({ last_sequence: 4 });
  });

  it("stores identical content once, with version_id the hex SHA-256 of the bytes", async () => {
    const fx = await repoWithOwner(app);
    const text = "same bytes in two places\n";
    await commit(fx, "main", { "one.md": text, "two/copy.md": text });
    await commit(fx, "main", { "three.md": text });
    const rows = await app.sql<{ sha: string }>(
      "SELECT encode(sha256, 'hex') AS sha FROM contents WHERE repo_id = $1",
      [fx.repoId],
    );
    expect(rows).toEqual([{ sha: sha256hex(text) }]);
    for (const e of await tree(fx)) expect(e.version_id).toBe(sha256hex(text));
  });

  it("writes exactly one com.svc.commit.created event with the commit's data", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "a" });
    await createBranch(fx, "feat/x");
    const seq = await commit(fx, "feat/x", { "a.md": null, "b.md": "b", "c.md": "c" }, "feature work");
    const rows = await app.sql<{ data: unknown; source: string }>(
      "SELECT data, source FROM events WHERE repo = $1 AND type = 'com.svc.commit.created' ORDER BY position",
      [fx.repo],
    );
    expect(rows).toHaveLength(2);
    expect(rows[1]).toEqual({
      source: `/repos/${fx.repo}`,
      data: {
        repo: fx.repo,
        branch: "feat/x",
        sequence: seq,
        author: fx.owner,
        message: "feature work",
        file_count: 3,
      },
    });
  });
});

describe("getting a commit by sequence", () => {
  it("returns sequence, branch, message, author, created_at and files with version ids", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "gone.md": "bye", "keep.md": "v1" });
    await createBranch(fx, "edit");
    const seq = await commit(fx, "edit", { "keep.md": "v2", "gone.md": null, "new/é.md": "new" }, "edit it");
    const res = await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
      params: { repo: fx.repo, sequence: String(seq) },
    });
    expectOk(res, 200);
    expect(Object.keys(res.body).sort()).toEqual([
      "author",
      "branch",
      "created_at",
      "files",
      "message",
      "sequence",
    ]);
    expect(res.body).toMatchObject({ sequence: seq, branch: "edit", message: "edit it", author: fx.owner });
    expect(Date.parse(res.body.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(res.body.files).toEqual([
      { path: "gone.md", version_id: null },
      { path: "keep.md", version_id: sha256hex("v2") },
      { path: "new/é.md", version_id: sha256hex("new") },
    ]);
  });
});

describe("paths", () => {
  it("accept a path of exactly 1,024 UTF-8 bytes, nested folders and unicode", async () => {
    const fx = await repoWithOwner(app);
    // Five segments of 204 bytes and four slashes: a segment may have at most 255 bytes.
    const long = Array.from({ length: 5 }, () => "é".repeat(102)).join("/");
    expect(Buffer.byteLength(long)).toBe(1024);
    const nested = "a/b/c/d/e/f/日本語 file (1).md";
    await commit(fx, "main", { [long]: "long", [nested]: "deep" });
    expect((await tree(fx)).map((e) => e.path).sort()).toEqual([long, nested].sort());
    const f = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: nested },
    });
    expectOk(f, 200);
    expect(f.body.path).toBe(nested);
  });
});

describe("content above the blob threshold", () => {
  let blobApp: TestApp;
  beforeAll(async () => {
    blobApp = await startTestApp({ SVC_BLOB_THRESHOLD_BYTES: "16" });
  });
  afterAll(() => blobApp.close());

  it("is stored once in the blob store and read back through file, tree and diff", async () => {
    const fx = await repoWithOwner(blobApp);
    const big = "a line well over sixteen bytes\n".repeat(4);
    await commit(fx, "main", { "big.md": big, "copy.md": big, "small.md": "tiny" });
    const rows = await blobApp.sql<{ inline: boolean; blob: boolean }>(
      "SELECT data IS NOT NULL AS inline, blob_key IS NOT NULL AS blob FROM contents WHERE repo_id = $1 ORDER BY size",
      [fx.repoId],
    );
    expect(rows).toEqual([
      { inline: true, blob: false },
      { inline: false, blob: true },
    ]);
    const f = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: "copy.md" },
    });
    expectOk(f, 200);
    expect(Buffer.from(f.body.content, "base64").toString()).toBe(big);
    expect(f.body.version_id).toBe(sha256hex(big));
    await createBranch(fx, "edit");
    await commit(fx, "edit", { "big.md": `${big}one more line\n` });
    const d = await api(fx.client).get("/repos/:repo*/-/diff", {
      params: { repo: fx.repo },
      query: { branch: "edit" },
    });
    expect(d.body.changes).toEqual([
      expect.objectContaining({
        path: "big.md",
        status: "modified",
        diff: expect.stringContaining("+one more line"),
      }),
    ]);
  });
});
