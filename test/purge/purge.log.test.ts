import { describe, expect, it } from "vitest";
import { parseVerifierKey, verifyCheckpoint } from "../../shared/transparency/note.ts";
import { verifyConsistency, verifyInclusion } from "../../shared/transparency/verify.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, useFixture, world } from "../support/world.ts";

const app = useFixture(startTestApp);

describe("purge and the transparency log", () => {
  it("removes a branch's commits but never their leaves: checkpoints and old proofs still verify", async () => {
    const key = parseVerifierKey((await app.anonymous.get("/.well-known/quire-log-key")).body as string);
    const repo = await world(app).repo();
    await repo.commit("main", { "keep.md": "keep" });
    const old = await repo.branch("old", { files: { "o.md": "old work" } });
    const [purged] = await app.sql<{ hash: string }>(
      "SELECT hash FROM commits WHERE repo_id = $1 AND sequence = $2",
      [repo.repoId, old.head],
    );
    await app.sql(
      "UPDATE branches SET status = 'abandoned', updated_at = now() - interval '2 days' WHERE repo_id = $1 AND name = 'old'",
      [repo.repoId],
    );
    const seen = (await repo.client.get(`${repo.base}/checkpoint`)).body as string;
    const before = verifyCheckpoint(seen, key);

    const res = await api(repo.client).post("/repos/:repo*/-/purge", {
      params: { repo: repo.repo },
      body: { older_than: "1d" },
    });
    expectOk(res, 200);
    expect(res.body.commits).toBe(1);

    expect((await repo.client.get(`${repo.base}/checkpoint`)).body).toBe(seen);
    const proof = (
      await repo.client.get(`${repo.base}/proof/inclusion?sequence=${old.head}&size=${before.size}`)
    ).body as { hashes: string[] };
    const hashes = proof.hashes.map((h) => Buffer.from(h, "base64"));
    expect(
      verifyInclusion(old.head - 1, before.size, Buffer.from(purged!.hash, "hex"), hashes, before.root),
    ).toBe(true);

    // Past the first block of 16 leaves: the commit that completes it hashes the purged leaf too.
    for (let i = before.size; i < 17; i++) await repo.commit("main", { "later.md": `later ${i}` });
    const after = verifyCheckpoint((await repo.client.get(`${repo.base}/checkpoint`)).body as string, key);
    const consistency = (
      (await repo.client.get(`${repo.base}/proof/consistency?from=${before.size}&to=${after.size}`)).body as {
        hashes: string[];
      }
    ).hashes.map((h) => Buffer.from(h, "base64"));
    expect(after.size).toBe(17);
    expect(verifyConsistency(before.size, after.size, before.root, after.root, consistency)).toBe(true);
    const late = (
      (await repo.client.get(`${repo.base}/proof/inclusion?sequence=${old.head}&size=${after.size}`))
        .body as {
        hashes: string[];
      }
    ).hashes.map((h) => Buffer.from(h, "base64"));
    expect(
      verifyInclusion(old.head - 1, after.size, Buffer.from(purged!.hash, "hex"), late, after.root),
    ).toBe(true);
  });
});
