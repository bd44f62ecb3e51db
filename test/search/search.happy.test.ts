import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveView } from "../../shared/commits/view.ts";
import {
  findPathsInView,
  MAX_CANDIDATES,
  MAX_INDEXED_BYTES,
  searchInView,
} from "../../shared/search/search.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";

// The queries behind the search and finder pages, against the database a real server wrote.
const app = useFixture(startTestApp);
let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: app.databaseUrl, max: 2 });
});
afterAll(() => pool.end());

async function searchAt(repoId: number, branch: string, at: number | undefined, term: string, limit = 20) {
  const view = await resolveView(pool, repoId, branch, at);
  return searchInView(pool, repoId, view, { term, limit });
}
const paths = (found: { hits: { path: string }[] }) => found.hits.map((h) => h.path);

describe("search of file contents in a view", () => {
  it("finds a content at every path that holds it in the view, and only there", async () => {
    const repo = await world(app).repo();
    const shared = "shared words: marmot\n";
    const first = await repo.commit("main", { "a.txt": shared, "b/c.txt": shared, "other.txt": "nothing\n" });
    const second = await repo.commit("main", { "a.txt": "changed\n" });
    const feature = await repo.branch("feature", {
      files: { "b/c.txt": null, "f.txt": "marmot on feature\n" },
    });

    expect(paths(await searchAt(repo.repoId, "main", first, "MARMOT"))).toEqual(["a.txt", "b/c.txt"]);
    expect(paths(await searchAt(repo.repoId, "main", second, "marmot"))).toEqual(["b/c.txt"]);
    // The branch's deletion hides main's file; its own file is found there only.
    expect(paths(await searchAt(repo.repoId, "feature", feature.head, "marmot"))).toEqual(["f.txt"]);
    expect(paths(await searchAt(repo.repoId, "main", undefined, "on feature"))).toEqual([]);
  });

  it("pages by path and says when there are more", async () => {
    const repo = await world(app).repo();
    await repo.commit(
      "main",
      Object.fromEntries(["d", "a", "c", "b"].map((n) => [`${n}.txt`, `lemur ${n}\n`])),
    );
    const view = await resolveView(pool, repo.repoId, "main", undefined);
    const one = await searchInView(pool, repo.repoId, view, { term: "lemur", limit: 3 });
    expect([paths(one), one.more]).toEqual([["a.txt", "b.txt", "c.txt"], true]);
    const two = await searchInView(pool, repo.repoId, view, { term: "lemur", after: "c.txt", limit: 3 });
    expect([paths(two), two.more]).toEqual([["d.txt"], false]);
  });

  it("answers a term in more contents than MAX_CANDIDATES from that many, and says so", async () => {
    const repo = await world(app).repo();
    // Two commits: a commit takes at most 1,000 files.
    const files = Array.from({ length: MAX_CANDIDATES + 5 }, (_, i) => [`n/${i}.txt`, `quokka ${i}\n`]);
    await repo.commit("main", Object.fromEntries(files.slice(0, 500)));
    await repo.commit("main", Object.fromEntries(files.slice(500)));
    const found = await searchAt(repo.repoId, "main", undefined, "quokka");
    expect([found.hits.length, found.more, found.capped]).toEqual([20, true, true]);
    const one = await searchAt(repo.repoId, "main", undefined, "quokka 1004");
    expect([paths(one), one.capped]).toEqual([["n/1004.txt"], false]);
  });

  it("indexes text once per content and leaves out binary, NUL-holding and oversized bodies", async () => {
    const repo = await world(app).repo();
    const late = Buffer.concat([Buffer.from("x".repeat(9000)), Buffer.from([0]), Buffer.from("tapir")]);
    await repo.commit("main", {
      "one.txt": "tapir\n",
      "same.txt": "tapir\n",
      "bin.dat": Buffer.from([0, 1, 2, 0x74, 0x61, 0x70, 0x69, 0x72]),
      "late-nul.txt": late,
      "big.txt": `tapir ${"y".repeat(MAX_INDEXED_BYTES)}`,
    });
    const rows = await app.sql<{ n: number }>(
      "SELECT count(*)::int AS n FROM search_texts WHERE repo_id = $1",
      [repo.repoId],
    );
    expect(rows[0]?.n).toBe(1);
    expect(paths(await searchAt(repo.repoId, "main", undefined, "tapir"))).toEqual(["one.txt", "same.txt"]);
  });
});

describe("the file finder", () => {
  it("matches the letters in order and ranks the file's name, then the path, then the shorter", async () => {
    const repo = await world(app).repo();
    await repo.commit("main", {
      "docs/deep/nested/config.md": "x",
      "config.yaml": "x",
      "src/configs/x.ts": "x",
      "c/o/n/f/i/g.txt": "x",
      "unrelated.md": "x",
      "gone/config.old": "x",
    });
    await repo.commit("main", { "gone/config.old": null });
    const view = await resolveView(pool, repo.repoId, "main", undefined);
    const found = await findPathsInView(pool, repo.repoId, view, { term: "CONFIG", limit: 10 });
    expect(found).toEqual({
      paths: ["config.yaml", "docs/deep/nested/config.md", "src/configs/x.ts", "c/o/n/f/i/g.txt"],
      more: false,
    });
    expect(await findPathsInView(pool, repo.repoId, view, { term: "config", limit: 2 })).toEqual({
      paths: ["config.yaml", "docs/deep/nested/config.md"],
      more: true,
    });
    // LIKE's wildcards are literal.
    expect((await findPathsInView(pool, repo.repoId, view, { term: "_", limit: 10 })).paths).toEqual([]);
  });
});

describe("GET /repos/{name}/-/search", () => {
  it("answers the page's results as JSON, and refuses a term it cannot search", async () => {
    const repo = await world(app).repo();
    const first = await repo.commit("main", { "a.txt": "one\nA wombat here\nwombat again\n" });
    await repo.commit("main", { "a.txt": "gone\n" });
    const get = (query: { q: string; at?: string }) =>
      api(repo.client).get("/repos/:repo*/-/search", { params: { repo: repo.repo }, query });
    const found = await get({ q: "WOMBAT", at: String(first) });
    expect(found.status).toBe(200);
    expect(found.body).toEqual({
      results: [
        {
          path: "a.txt",
          lines: [
            { number: 2, text: "A wombat here" },
            { number: 3, text: "wombat again" },
          ],
          line_count: 2,
        },
      ],
      more: false,
      capped: false,
    });
    expect((await get({ q: "wombat" })).body).toEqual({ results: [], more: false, capped: false });
    const refused = await get({ q: "wb" });
    expect([refused.status, (refused.body as { code: string }).code]).toEqual([400, "VALIDATION_FAILED"]);
  });
});
