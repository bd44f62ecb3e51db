import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner, sha256hex } from "./fixtures.ts";

const app = useFixture(startTestApp);

interface Entry {
  path: string;
  version_id: string;
  content_type: string;
  binary: boolean;
}

const entries = async (fx: RepoFixture, q = ""): Promise<Entry[]> => {
  const res = await fx.client.get(`${fx.base}/tree${q}`);
  expectOk(res, 200);
  return (res.body as { entries: Entry[] }).entries;
};
const paths = async (fx: RepoFixture, q = "") => (await entries(fx, q)).map((e) => e.path);
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Pages through the tree with `after`, `limit` at a time; returns every page's paths. */
async function allPages(fx: RepoFixture, limit: number, extra = ""): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const cursor = after === undefined ? "" : `&after=${encodeURIComponent(after)}`;
    const page = await paths(fx, `?limit=${limit}${cursor}${extra}`);
    if (page.length === 0) return pages;
    pages.push(page);
    after = page.at(-1);
    expect(pages.length).toBeLessThan(20);
  }
}

describe("the tree", () => {
  it("of an empty repo has no entries", async () => {
    const fx = await repoWithOwner(app);
    expect(await entries(fx)).toEqual([]);
  });

  it("lists each path with version_id, content_type and binary; PNG-like bytes are binary, UTF-8 is not", async () => {
    const fx = await repoWithOwner(app);
    const png = Buffer.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52,
    ]);
    const text = "Grüße, 世界 ✓\n";
    await commit(fx, "main", [
      { path: "img/logo.png", content: b64(png) },
      { path: "notes.txt", content: b64(text) },
      { path: "blob", content: b64(png), content_type: "application/x-thing" },
    ]);
    expect(await entries(fx)).toEqual([
      { path: "blob", version_id: sha256hex(png), content_type: "application/x-thing", binary: true },
      { path: "img/logo.png", version_id: sha256hex(png), content_type: "image/png", binary: true },
      {
        path: "notes.txt",
        version_id: sha256hex(text),
        content_type: expect.stringMatching(/^text\/plain/),
        binary: false,
      },
    ]);
  });

  it("at=N shows the tree as of commit N on that branch", async () => {
    const fx = await repoWithOwner(app);
    const s1 = await commit(fx, "main", { "a.md": "1" });
    const s2 = await commit(fx, "main", { "b.md": "2", "a.md": "1b" });
    await commit(fx, "main", { "a.md": null });
    expect(await paths(fx, "?at=0")).toEqual([]);
    expect(await entries(fx, `?at=${s1}`)).toMatchObject([{ path: "a.md", version_id: sha256hex("1") }]);
    expect(await entries(fx, `?at=${s2}`)).toMatchObject([
      { path: "a.md", version_id: sha256hex("1b") },
      { path: "b.md" },
    ]);
    expect(await paths(fx)).toEqual(["b.md"]);
    expect(await paths(fx, "?branch=main")).toEqual(["b.md"]);
  });

  it("pages through 250 files with limit=100 and after, every path once, in byte order", async () => {
    const fx = await repoWithOwner(app);
    // Mixed case, multi-byte and astral characters: byte order differs from UTF-16 and locale order.
    const names = Array.from({ length: 242 }, (_, i) => `dir${i % 7}/file-${String(i).padStart(3, "0")}.md`);
    names.push("Zeta.md", "alpha.md", "Älpha.md", "ｆull.md", "😀.md", "a/b", "a-b", "a.b");
    await commit(
      fx,
      "main",
      names.map((p) => ({ path: p, content: b64(`content of ${p}`) })),
    );
    const pages = await allPages(fx, 100);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 50]);
    const flat = pages.flat();
    expect(flat).toEqual([...names].sort(byBytes));
    expect(new Set(flat).size).toBe(250);
    expect(await paths(fx, "?limit=3")).toEqual(flat.slice(0, 3));
    expect(await paths(fx, `?limit=2&after=${encodeURIComponent("a-b")}`)).toEqual(
      flat.slice(flat.indexOf("a-b") + 1, flat.indexOf("a-b") + 3),
    );
  });

  it("defaults to 100 entries a page", async () => {
    const fx = await repoWithOwner(app);
    await commit(
      fx,
      "main",
      Array.from({ length: 101 }, (_, i) => ({ path: `f${String(i).padStart(3, "0")}`, content: b64("x") })),
    );
    expect(await entries(fx)).toHaveLength(100);
    expect(await paths(fx, "?after=f099")).toEqual(["f100"]);
  });
});

describe("a branch's tree", () => {
  let fx: RepoFixture;
  let base: number;
  beforeAll(async () => {
    fx = await repoWithOwner(app);
    await commit(fx, "main", { "A.md": "main A", "b.md": "main b", "keep.md": "keep", "z/y.md": "zy" });
    base = await commit(fx, "main", { "b.md": "main b2" });
    await createBranch(fx, "feature/x");
    await commit(fx, "main", { "b.md": "main b3", "late.md": "after the base", "keep.md": null });
    await commit(fx, "feature/x", { "a.md": "branch a", "b.md": null, "z/x.md": "branch zx" });
  });

  it("lays the branch's changes over main at its base", async () => {
    const q = `?branch=${encodeURIComponent("feature/x")}`;
    expect(await entries(fx, q)).toEqual([
      expect.objectContaining({ path: "A.md", version_id: sha256hex("main A") }),
      expect.objectContaining({ path: "a.md", version_id: sha256hex("branch a") }),
      expect.objectContaining({ path: "keep.md", version_id: sha256hex("keep") }),
      expect.objectContaining({ path: "z/x.md", version_id: sha256hex("branch zx") }),
      expect.objectContaining({ path: "z/y.md", version_id: sha256hex("zy") }),
    ]);
  });

  it("does not see main's commits after the base, and main does not see the branch", async () => {
    const branchPaths = await paths(fx, "?branch=feature/x");
    expect(branchPaths).not.toContain("late.md");
    expect(await paths(fx)).toEqual(["A.md", "b.md", "late.md", "z/y.md"]);
  });

  it("pages through the merged view in byte order", async () => {
    const pages = await allPages(fx, 2, "&branch=feature/x");
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(["A.md", "a.md", "keep.md", "z/x.md", "z/y.md"]);
  });

  it("at the base shows main as of the base", async () => {
    expect(await entries(fx, `?branch=feature/x&at=${base}`)).toEqual([
      expect.objectContaining({ path: "A.md" }),
      expect.objectContaining({ path: "b.md", version_id: sha256hex("main b2") }),
      expect.objectContaining({ path: "keep.md" }),
      expect.objectContaining({ path: "z/y.md" }),
    ]);
  });
});
