import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner, sha256hex } from "./fixtures.ts";

const seq: Record<string, number> = {};
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  seq["create"] = await commit(fx, "main", { "doc.md": "v1" }, "create doc");
  seq["unrelated"] = await commit(fx, "main", { "other.md": "o" }, "other");
  seq["edit"] = await commit(fx, "main", { "doc.md": "v2" }, "edit doc");
  await createBranch(fx, "feature/x");
  seq["mainAfterBase"] = await commit(fx, "main", { "doc.md": "v3" }, "main after base");
  seq["branchEdit"] = await commit(fx, "feature/x", { "doc.md": "vb" }, "branch edit");
  seq["branchDelete"] = await commit(fx, "feature/x", { "doc.md": null }, "branch delete");
  seq["branchOther"] = await commit(fx, "feature/x", { "other.md": "ob" }, "branch other");
});

interface Entry {
  sequence: number;
  branch: string;
  version_id: string | null;
  deleted: boolean;
  author: string;
  message: string;
  created_at: string;
}

const history = async (path: string, q = ""): Promise<Entry[]> => {
  const res = await fx.client.get(`${fx.base}/file/${path}/history${q}`);
  expectOk(res, 200);
  return (res.body as { entries: Entry[] }).entries;
};

describe("a file's history", () => {
  it("on main lists the commits that changed the file, newest first, with version and author", async () => {
    const entries = await history("doc.md");
    expect(entries.map((e) => e.sequence)).toEqual([seq["mainAfterBase"], seq["edit"], seq["create"]]);
    expect(entries[0]).toMatchObject({
      sequence: seq["mainAfterBase"],
      branch: "main",
      version_id: sha256hex("v3"),
      deleted: false,
      author: fx.owner,
      message: "main after base",
    });
    expect(entries[2]).toMatchObject({ version_id: sha256hex("v1"), message: "create doc" });
    for (const e of entries) expect(Number.isNaN(Date.parse(e.created_at))).toBe(false);
  });

  it("on a branch lists its own commits, then main's up to the base, not main's later ones", async () => {
    const entries = await history("doc.md", `?branch=${encodeURIComponent("feature/x")}`);
    expect(entries.map((e) => [e.sequence, e.branch])).toEqual([
      [seq["branchDelete"], "feature/x"],
      [seq["branchEdit"], "feature/x"],
      [seq["edit"], "main"],
      [seq["create"], "main"],
    ]);
    expect(entries[0]).toMatchObject({ deleted: true, version_id: null, message: "branch delete" });
    expect(entries[1]).toMatchObject({ deleted: false, version_id: sha256hex("vb") });
  });

  it("pages newest first with limit and after (the sequence of the last entry)", async () => {
    const q = "?branch=feature/x&limit=1";
    const seen: number[] = [];
    let after = "";
    for (let i = 0; i < 10; i++) {
      const page = await history("doc.md", q + after);
      if (page.length === 0) break;
      expect(page).toHaveLength(1);
      seen.push(page[0]!.sequence);
      after = `&after=${page[0]!.sequence}`;
    }
    expect(seen).toEqual([seq["branchDelete"], seq["branchEdit"], seq["edit"], seq["create"]]);
    const two = await history("doc.md", `?limit=2&after=${seq["mainAfterBase"]}`);
    expect(two.map((e) => e.sequence)).toEqual([seq["edit"], seq["create"]]);
  });

  it("of a path in a folder, and of a file only the branch changed", async () => {
    await commit(fx, "main", { "dir/sub/file.md": "deep" }, "deep");
    const deep = await history("dir/sub/file.md");
    expect(deep.map((e) => e.message)).toEqual(["deep"]);
    const other = await history("other.md", "?branch=feature/x");
    expect(other.map((e) => e.sequence)).toEqual([seq["branchOther"], seq["unrelated"]]);
  });

  it("of a path that never existed is empty", async () => {
    expect(await history("never.md")).toEqual([]);
  });
});
