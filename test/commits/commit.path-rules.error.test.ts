import { describe, expect, it } from "vitest";
import { merge, rebase } from "../merge/fixtures.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { useFixture } from "../support/world.ts";
import { commit, createBranch, expectError, type RepoFixture, repoWithOwner, snapshot } from "./fixtures.ts";

const app = useFixture(startTestApp);

const post = (fx: RepoFixture, path: string, content: string | null = "x") =>
  api(fx.client).post("/repos/:repo*/-/commit", {
    params: { repo: fx.repo },
    body: {
      branch: "main",
      message: "m",
      files: [{ path, content: content === null ? null : b64(content) }],
    },
  });

/**
 * Paths a working copy's file system may open as its `.quire/` folder, where `quire` reads the
 * server it sends the token to (docs/names.md, "Paths that cannot be written").
 */
const reserved = [
  ".quire/copy.json",
  "docs/.quire/copy.json",
  ".QUIRE/copy.json",
  "a/.Quire",
  ".quire./copy.json",
  ".quire  /copy.json",
  ".qu\u200cire/copy.json",
  "\ufeff.quire/copy.json",
  ".quire::$INDEX_ALLOCATION/copy.json",
  "QUIRE~1/copy.json",
];

describe("a write of a path a working copy keeps for itself: 400 INVALID_PATH, nothing written", () => {
  it.each(reserved)("%j", async (path) => {
    const fx = await repoWithOwner(app);
    const before = await snapshot(app, fx);
    const msg = expectError(await post(fx, path), 400, "INVALID_PATH");
    expect(msg).toContain("body.files.0.path");
    expect(msg).toContain(".quire");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("names that only look alike are files like any other", async () => {
    const fx = await repoWithOwner(app);
    for (const path of ["quire/x", ".quire2/x", "x.quire", "a/.quirex", "quire~/x", ".qu ire/x"])
      expect((await post(fx, path)).status, path).toBe(201);
  });
});

describe("a path segment over 255 bytes of UTF-8: 400 INVALID_PATH naming the path", () => {
  it("256 bytes (128 two-byte letters) is refused, nothing written", async () => {
    const fx = await repoWithOwner(app);
    const path = `docs/${"é".repeat(128)}.md`;
    const before = await snapshot(app, fx);
    const msg = expectError(await post(fx, path), 400, "INVALID_PATH");
    expect(msg).toContain("259 bytes");
    expect(msg).toContain("docs/éé");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("exactly 255 bytes is accepted", async () => {
    const fx = await repoWithOwner(app);
    expect((await post(fx, `docs/${"é".repeat(126)}.md`)).status).toBe(201);
    expect((await post(fx, `${"a".repeat(255)}/b`)).status).toBe(201);
  });
});

/** Makes `path` a file committed before the rules existed, as data from an older server is. */
async function plantLegacy(fx: RepoFixture, branch: string, path: string): Promise<void> {
  const seq = await commit(fx, branch, { "planted.tmp": "payload" });
  await app.sql(
    "UPDATE file_changes SET path = $1 WHERE repo_id = $2 AND sequence = $3 AND path = 'planted.tmp'",
    [path, fx.repoId, seq],
  );
}

describe("paths written before the rules: merge and rebase refuse to write them again", () => {
  it("merge: 400 INVALID_PATH naming the path, nothing written; deleting it on the branch lets it merge", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "planted");
    await plantLegacy(fx, "planted", "sub/.quire/copy.json");
    const before = await snapshot(app, fx);
    const msg = expectError(await merge(fx, "planted"), 400, "INVALID_PATH");
    expect(msg).toContain("sub/.quire/copy.json");
    expect(await snapshot(app, fx)).toEqual(before);
    // A deletion is allowed, so the branch can be cleaned.
    await commit(fx, "planted", { "sub/.quire/copy.json": null, "ok.md": "ok" });
    expect((await merge(fx, "planted")).status).toBe(200);
  });

  it("rebase: 400 INVALID_PATH, nothing written", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "planted");
    await plantLegacy(fx, "planted", `${"x".repeat(300)}.md`);
    await commit(fx, "main", { "moved.md": "main moves on" });
    const before = await snapshot(app, fx);
    const msg = expectError(await rebase(fx, "planted"), 400, "INVALID_PATH");
    expect(msg).toContain("303 bytes");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("a legacy path can still be read and deleted with a commit", async () => {
    const fx = await repoWithOwner(app);
    await plantLegacy(fx, "main", ".quire/copy.json");
    const read = await api(fx.client).get("/repos/:repo*/-/file/:path*", {
      params: { repo: fx.repo, path: ".quire/copy.json" },
    });
    expect(read.status).toBe(200);
    expect((await post(fx, ".quire/copy.json", null)).status).toBe(201);
  });
});
