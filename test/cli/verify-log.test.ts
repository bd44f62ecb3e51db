import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { copyWorld } from "./workcopy-support.ts";

const app = useFixture(startTestApp);

describe("quire and the repo's transparency log", () => {
  it("verify proves the heads with the signed log and says what it checked", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n" });
      await w.repo.branch("side", { files: { "s.md": "s\n" } });
      const first = await w.run(["verify", w.repo.repo]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^checkpoint: \S+, size 2, root \S+, signature by \S+ valid$/m);
      expect(first.stdout).toContain("no checkpoint of this repo seen before on this machine");
      expect(first.stdout).toMatch(
        /^commit 1 \(head of main\): recomputed [0-9a-f]{12}…, inclusion proof of 1 hash\(es\) holds$/m,
      );
      expect(first.stdout).toMatch(/^commit 2 \(head of side\): .* inclusion proof of 1 hash\(es\) holds$/m);

      await w.repo.commit("main", { "b.md": "b\n" });
      const json = JSON.parse((await w.run(["--json", "verify", w.repo.repo])).stdout);
      expect(json).toMatchObject({
        ok: true,
        checkpoint: { size: 3 },
        previous: { size: 2, proof_hashes: 1 },
        commits: [
          { sequence: 2, head_of: "side" },
          { sequence: 3, head_of: "main" },
        ],
      });
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("refuses any command on a repo whose history was rewritten, naming both checkpoints", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n" });
      await w.repo.commit("main", { "b.md": "b\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await app.sql("UPDATE commits SET hash = repeat('ab', 32) WHERE repo_id = $1 AND sequence = 1", [
        w.repo.repoId,
      ]);
      await app.sql("SELECT tlog_build($1)", [w.repo.repoId]);
      const pull = await w.run(["pull"], "c");
      expect(pull.code).toBe(1);
      expect(pull.stderr).toContain(
        `the history of ${w.repo.repo} on ${app.url} does not extend the one seen before (its consistency proof does not hold)`,
      );
      expect(pull.stderr).toMatch(
        /checkpoint seen \S+ \(size 2, root (\S+)\), checkpoint now \(size 2, root (?!\1)\S+\)/,
      );
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});
