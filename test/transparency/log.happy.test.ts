import { beforeAll, describe, expect, it } from "vitest";
import { parseVerifierKey, verifyCheckpoint } from "../../shared/transparency/note.ts";
import { verifyConsistency, verifyInclusion } from "../../shared/transparency/verify.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { client } from "../support/client.ts";
import { expectOk, type RepoHandle, useFixture, world } from "../support/world.ts";

// The log is checked here with the RFC 9162 verifier (shared/transparency/verify.ts), which is
// written from the RFC independently of how the server builds proofs; test/transparency/
// go-verifier.test.ts checks the same answers with Go's golang.org/x/mod/sumdb.

const app = useFixture(startTestApp);
let repo: RepoHandle;
let key: { name: string; publicKey: Buffer };
const hashes: Buffer[] = [];

async function checkpoint(r: RepoHandle = repo) {
  const res = await r.client.get(`${r.base}/checkpoint`);
  expectOk(res, 200);
  expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  return { note: res.body as string, ...verifyCheckpoint(res.body as string, key) };
}

async function chainHashes(r: RepoHandle, to: number): Promise<Buffer[]> {
  const body = okBody(
    await api(r.client).get("/repos/:repo*/-/chain", {
      params: { repo: r.repo },
      query: { from: "1", to: String(to) },
    }),
  );
  return body.commits.map((c) => Buffer.from(c.hash, "hex"));
}

const b = (hs: string[]) => hs.map((h) => Buffer.from(h, "base64"));

beforeAll(async () => {
  const res = await client(app.url, async () => null).get("/.well-known/quire-log-key");
  expectOk(res, 200);
  key = parseVerifierKey(res.body as string);
  repo = await world(app).repo();
  const feature = await repo.branch("feature", { files: { "a.md": "a" } });
  for (let i = 0; i < 6; i++) await repo.commit("main", { "m.md": `main ${i}` });
  await feature.commit({ "b.md": "b" });
  hashes.push(...(await chainHashes(repo, 8)));
});

describe("the transparency log", () => {
  it("publishes its key under the service's host, and signs checkpoints with it", async () => {
    expect(key.name).toBe(new URL(app.url).host);
    const cp = await checkpoint();
    expect(cp.origin).toBe(`${key.name}/${repo.repo}`);
    expect(cp.size).toBe(8);
    expect(cp.note).toMatch(/^[^\n]+\n8\n[A-Za-z0-9+/]{43}=\n\n\u2014 \S+ [A-Za-z0-9+/=]+\n$/);
  });

  it("starts a repo with the empty tree", async () => {
    const empty = await world(app).repo();
    const cp = await checkpoint(empty);
    expect(cp.size).toBe(0);
    expect(cp.root.toString("hex")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("proves every commit's hash is its leaf, in every tree that holds it", async () => {
    const { root, size } = await checkpoint();
    for (let seq = 1; seq <= size; seq++) {
      const proof = okBody(
        await api(repo.client).get("/repos/:repo*/-/proof/inclusion", {
          params: { repo: repo.repo },
          query: { sequence: String(seq), size: String(size) },
        }),
      );
      expect(proof).toMatchObject({ leaf_index: seq - 1, tree_size: size });
      expect(verifyInclusion(seq - 1, size, hashes[seq - 1]!, b(proof.hashes), root)).toBe(true);
      expect(verifyInclusion(seq - 1, size, hashes[seq % size]!, b(proof.hashes), root)).toBe(false);
    }
  });

  it("proves that each checkpoint extends the ones before it", async () => {
    const before = await checkpoint();
    await repo.commit("main", { "m.md": "later" });
    await repo.commit("feature", { "b.md": "later" });
    const after = await checkpoint();
    expect(after.size).toBe(before.size + 2);
    const proof = okBody(
      await api(repo.client).get("/repos/:repo*/-/proof/consistency", {
        params: { repo: repo.repo },
        query: { from: String(before.size), to: String(after.size) },
      }),
    );
    expect(proof).toMatchObject({ from: before.size, to: after.size });
    expect(verifyConsistency(before.size, after.size, before.root, after.root, b(proof.hashes))).toBe(true);
    expect(verifyConsistency(before.size, after.size, after.root, after.root, b(proof.hashes))).toBe(false);
  });

  it("appends merges and rebases too, and agrees with a log rebuilt from the commits", async () => {
    expectOk(await repo.client.post(`${repo.base}/rebase`, { branch: "feature" }), 200);
    expectOk(await repo.client.post(`${repo.base}/merge`, { branch: "feature" }), 200);
    const cp = await checkpoint();
    const [row] = await app.sql<{ last_sequence: number }>("SELECT last_sequence FROM repos WHERE id = $1", [
      repo.repoId,
    ]);
    expect(cp.size).toBe(row!.last_sequence);
    await app.sql("SELECT tlog_build($1)", [repo.repoId]);
    expect((await checkpoint()).note).toBe(cp.note);
  });
});
