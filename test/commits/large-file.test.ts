import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { archiveOf, downloadAs, filesOf } from "../archives/fixtures.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { errorOf, expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner, sha256hex } from "./fixtures.ts";

// Files as large as the default body limit (32 MiB) lets through: committed, read back and
// archived byte for byte. Functional only; how long they take and how long they hold the event
// loop is measured by `npm run bench -- --only large-files` (docs/benchmarks.md).

const BODY_LIMIT = 32 * 1024 * 1024;
/** The largest file whose base64 fits in the body limit with room for the JSON around it. */
const LARGEST_FILE = Math.floor((BODY_LIMIT - 1024) / 4) * 3;
/** Moving ~100 MB through the test client and the server takes a while on a busy machine. */
const BIG_TEST_TIMEOUT_MS = 180_000;

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));

async function readBack(path: string, branch = "main"): Promise<{ bytes: Buffer; versionId: string }> {
  const res = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
    params: { repo: fx.repo, path },
    query: { branch },
  });
  expectOk(res, 200);
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
  // A large body is streamed, as the same JSON object a small one gets.
  expect(Object.keys(res.body)).toEqual(["path", "content", "content_type", "version_id"]);
  expect(res.body.path).toBe(path);
  return { bytes: Buffer.from(res.body.content, "base64"), versionId: res.body.version_id };
}

describe("a file as large as the body limit allows", () => {
  const data = randomBytes(LARGEST_FILE);

  it(
    "is committed (201), reads back byte-identical, and is in the archive",
    async () => {
      const seq = await commit(fx, "main", { "big/data.bin": data });
      const read = await readBack("big/data.bin");
      expect(read.bytes.length).toBe(data.length);
      expect(read.bytes.equals(data)).toBe(true);
      expect(read.versionId).toBe(sha256hex(data));

      const repoLast = fx.repo.split("/")[1];
      const res = await downloadAs(app, fx.owner, `${fx.base}/archive`);
      const files = filesOf(await archiveOf(res, `${repoLast}-${seq}.tar.gz`), `${repoLast}-${seq}`);
      expect(files.get("big/data.bin")?.equals(data)).toBe(true);
    },
    BIG_TEST_TIMEOUT_MS,
  );

  it("a large text file (8 MiB) is stored as text and reads back identical", async () => {
    const text = "a line of prose, repeated to make a large text file\n".repeat(160_000);
    await commit(fx, "main", { "big/prose.md": text });
    expect((await readBack("big/prose.md")).bytes.toString("utf8")).toBe(text);
    const tree = await api(fx.client).get("/repos/:repo*/-/tree", {
      params: { repo: fx.repo },
      query: { after: "big/data.bin", limit: "1" },
    });
    expectOk(tree, 200);
    expect(tree.body.entries[0]).toMatchObject({ path: "big/prose.md", binary: false });
  });

  it("files of a large body decoded as it is parsed: padded, repeated and beside small ones, read back identical", async () => {
    // Over 1 MiB of body, each long content (64 KiB or more) decoded in the body's own bytes.
    const one = randomBytes(400_001);
    const two = randomBytes(400_002);
    const text = "a line of markdown\n".repeat(5_000);
    const files = { "pad/one.bin": one, "pad/two.bin": two, "pad/again.bin": one, "pad/text.md": text };
    const seq = await commit(fx, "main", { ...files, "pad/small.md": "small" });
    const res = await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
      params: { repo: fx.repo, sequence: String(seq) },
    });
    expectOk(res, 200);
    for (const [path, data] of Object.entries(files)) {
      const read = await readBack(path);
      expect(read.bytes.equals(Buffer.from(data))).toBe(true);
      expect(res.body.files.find((f) => f.path === path)?.version_id).toBe(sha256hex(Buffer.from(data)));
    }
    expect((await readBack("pad/text.md")).bytes.toString("utf8")).toBe(text);
    const tree = await api(fx.client).get("/repos/:repo*/-/tree", {
      params: { repo: fx.repo },
      query: { after: "pad/small.md", limit: "1" },
    });
    expectOk(tree, 200);
    expect(tree.body.entries[0]).toMatchObject({ path: "pad/text.md", binary: false });
  });

  it("base64 that is invalid only near the end of a large body: 400 INVALID_CONTENT, nothing written", async () => {
    const content = `${b64(randomBytes(6 * 1024 * 1024)).slice(0, -8)}-AAAAAAA`;
    const res = await api(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "main",
        message: "bad",
        files: [{ path: "bad.bin", content }],
      },
    });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(errorOf(res).code).toBe("INVALID_CONTENT");
    expect(errorOf(res).error).toContain("base64");
  });
});

describe("diffs of large or very different text files stay bounded", () => {
  const lines = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${tag} ${i} ${"x".repeat(40)}`).join("\n");

  it("two versions that differ on every one of 3,000 lines: listed as modified, diff ''", async () => {
    await commit(fx, "main", { "diff/every-line.md": lines("before", 3000) });
    await createBranch(fx, "rewrite");
    await commit(fx, "rewrite", { "diff/every-line.md": lines("after", 3000) });
    const res = await api(fx.client).get("/repos/:repo*/-/diff", {
      params: { repo: fx.repo },
      query: { branch: "rewrite" },
    });
    expectOk(res, 200);
    expect(res.body.changes).toEqual([
      { path: "diff/every-line.md", status: "modified", binary: false, diff: "" },
    ]);
  });

  it("a few changed lines in a large text file still get a unified diff", async () => {
    const before = lines("same", 20_000);
    const after = before.replace("same 10000 ", "CHANGED 10000 ");
    await commit(fx, "main", { "diff/sparse.md": before });
    await createBranch(fx, "sparse");
    await commit(fx, "sparse", { "diff/sparse.md": after });
    const res = await api(fx.client).get("/repos/:repo*/-/diff", {
      params: { repo: fx.repo },
      query: { branch: "sparse" },
    });
    expectOk(res, 200);
    expect(res.body.changes).toHaveLength(1);
    expect(res.body.changes[0]?.diff).toContain("-same 10000 ");
    expect(res.body.changes[0]?.diff).toContain("+CHANGED 10000 ");
  });

  it("a file above the text diff limit in the blob store: diff ''", async () => {
    await createBranch(fx, "big-text");
    await commit(fx, "big-text", { "big/prose.md": `${"changed prose\n".repeat(200_000)}` });
    const res = await api(fx.client).get("/repos/:repo*/-/diff", {
      params: { repo: fx.repo },
      query: { branch: "big-text" },
    });
    expectOk(res, 200);
    expect(res.body.changes).toEqual([{ path: "big/prose.md", status: "modified", binary: false, diff: "" }]);
  });
});
