import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner, sha256hex } from "./fixtures.ts";

// The chain is recomputed here from its definition (DESIGN "Hash chain"), independently of
// shared/commits/hash.ts: hex SHA-256 of newline-terminated lines prev_hash, sequence, repo,
// branch, author, message, created_at, then `path:content_sha256` per file sorted by path bytes.

interface ChainCommit {
  sequence: number;
  repo: string;
  branch: string;
  author: string;
  message: string;
  created_at: string;
  files: { path: string; content_sha256: string }[];
  prev_hash: string | null;
  hash: string;
}

const GENESIS = "0".repeat(64);

function recompute(c: ChainCommit): string {
  const files = [...c.files].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const lines = [c.prev_hash, String(c.sequence), c.repo, c.branch, c.author, c.message, c.created_at];
  for (const f of files) lines.push(`${f.path}:${f.content_sha256}`);
  return createHash("sha256")
    .update(lines.map((l) => `${l}\n`).join(""), "utf8")
    .digest("hex");
}

/** Every problem found verifying `commits` (all of a repo's commits, in sequence order). */
function verify(commits: ChainCommit[]): string[] {
  const problems: string[] = [];
  const lastOnBranch = new Map<string, string>();
  for (const c of commits) {
    if (recompute(c) !== c.hash) problems.push(`${c.sequence}: hash does not match its inputs`);
    const expectedPrev = lastOnBranch.get(c.branch) ?? GENESIS;
    if (c.prev_hash !== expectedPrev)
      problems.push(`${c.sequence}: prev_hash is not the branch's previous hash`);
    lastOnBranch.set(c.branch, c.hash);
  }
  return problems;
}

let head: number;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", {
    "z.md": "z",
    "a.md": "a",
    "Z.md": "Z",
    "é.md": "e",
    "😀.md": "s",
    "ｆ.md": "f",
  });
  await createBranch(fx, "feature/x");
  await commit(fx, "feature/x", { "a.md": "a on branch", "z.md": null }, "multi-line\nmessage ✓");
  await commit(fx, "main", { "a.md": "a2" }, "main again");
  await createBranch(fx, "other");
  await commit(fx, "other", { "new.md": "n" }, "other's first");
  await commit(fx, "feature/x", { "b.md": "b" }, "branch again");
  head = await commit(fx, "main", { "é.md": null, "c/d.md": "" }, "  spaces kept  ");
});

const chain = async (q: string): Promise<ChainCommit[]> => {
  const res = await fx.client.get(`${fx.base}/chain${q}`);
  expectOk(res, 200);
  return (res.body as { commits: ChainCommit[] }).commits;
};

describe("the hash chain", () => {
  it("returns every commit in the range with the inputs of its hash", async () => {
    const commits = await chain(`?from=1&to=${head}`);
    expect(commits.map((c) => c.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(commits.map((c) => c.branch)).toEqual(["main", "feature/x", "main", "other", "feature/x", "main"]);
    for (const c of commits) {
      expect(c).toMatchObject({ repo: fx.repo, author: fx.owner });
      expect(c.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(c.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    }
    expect(commits[1]!.message).toBe("multi-line\nmessage ✓");
    expect(commits[1]!.files).toEqual([
      { path: "a.md", content_sha256: sha256hex("a on branch") },
      { path: "z.md", content_sha256: "" },
    ]);
    expect(commits[5]!.files).toEqual([
      { path: "c/d.md", content_sha256: sha256hex("") },
      { path: "é.md", content_sha256: "" },
    ]);
  });

  it("verifies: every hash recomputes and each prev_hash is the previous hash on the same branch", async () => {
    const commits = await chain(`?from=1&to=${head}`);
    expect(verify(commits)).toEqual([]);
    // Each branch's first commit starts from 64 zeros, including branches created off main.
    expect(commits.filter((c) => c.prev_hash === GENESIS).map((c) => c.sequence)).toEqual([1, 2, 4]);
  });

  it("matches the branch heads and the commit records", async () => {
    const commits = await chain(`?from=1&to=${head}`);
    const heads = await app.sql<{ name: string; head_hash: string }>(
      "SELECT name, head_hash FROM branches WHERE repo_id = $1 ORDER BY name",
      [fx.repoId],
    );
    const last = (b: string) => commits.filter((c) => c.branch === b).at(-1)!.hash;
    expect(heads).toEqual([
      { name: "feature/x", head_hash: last("feature/x") },
      { name: "main", head_hash: last("main") },
      { name: "other", head_hash: last("other") },
    ]);
    const got = okBody(
      await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
        params: { repo: fx.repo, sequence: "2" },
      }),
    );
    expect(Date.parse(got.created_at)).toBe(Date.parse(commits[1]!.created_at));
    expect(got.message).toBe(commits[1]!.message);
  });

  it("returns only the asked range, from defaulting to 1", async () => {
    expect((await chain("?from=3&to=4")).map((c) => c.sequence)).toEqual([3, 4]);
    expect((await chain("?to=2")).map((c) => c.sequence)).toEqual([1, 2]);
    expect((await chain("?from=5&to=5")).map((c) => c.sequence)).toEqual([5]);
  });

  it("fails verification once a message is changed in the database", async () => {
    const before = await chain(`?from=1&to=${head}`);
    await app.sql("UPDATE commits SET message = 'tampered' WHERE repo_id = $1 AND sequence = 3", [fx.repoId]);
    try {
      const after = await chain(`?from=1&to=${head}`);
      expect(after[2]!.message).toBe("tampered");
      expect(after[2]!.hash).toBe(before[2]!.hash);
      expect(verify(after)).toEqual(["3: hash does not match its inputs"]);
    } finally {
      await app.sql("UPDATE commits SET message = $2 WHERE repo_id = $1 AND sequence = 3", [
        fx.repoId,
        before[2]!.message,
      ]);
    }
    expect(verify(await chain(`?from=1&to=${head}`))).toEqual([]);
  });

  it("fails verification once a stored hash is replaced, at the next commit of that branch", async () => {
    const before = await chain(`?from=1&to=${head}`);
    const forged = "f".repeat(64);
    await app.sql("UPDATE commits SET hash = $2 WHERE repo_id = $1 AND sequence = 2", [fx.repoId, forged]);
    try {
      expect(verify(await chain(`?from=1&to=${head}`))).toEqual([
        "2: hash does not match its inputs",
        "5: prev_hash is not the branch's previous hash",
      ]);
    } finally {
      await app.sql("UPDATE commits SET hash = $2 WHERE repo_id = $1 AND sequence = 2", [
        fx.repoId,
        before[1]!.hash,
      ]);
    }
  });
});

describe("concurrent commits", () => {
  it("get gap-free sequences across branches and still form a valid chain per branch", async () => {
    const cfx = await repoWithOwner(app);
    await commit(cfx, "main", { "seed.md": "seed" });
    await createBranch(cfx, "b1");
    await createBranch(cfx, "b2");
    const branches = ["main", "b1", "b2"];
    const seqs = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        commit(cfx, branches[i % 3]!, { [`f${i}.md`]: `${i}`, "shared.md": `${i}` }, `c${i}`),
      ),
    );
    expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => i + 2));
    const res = await api(cfx.client).get("/repos/:repo*/-/chain", {
      params: { repo: cfx.repo },
      query: { from: "1", to: "16" },
    });
    expectOk(res, 200);
    expect(res.body.commits).toHaveLength(16);
    expect(verify(res.body.commits)).toEqual([]);
  });
});
