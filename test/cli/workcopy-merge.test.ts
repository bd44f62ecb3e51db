import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_COMMIT_FILES } from "../../cli/workcopy/copy.ts";
import { MAX_FILES_PER_COMMIT } from "../../shared/api/commits.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { policies } from "../support/policies.ts";
import { installPolicies, useFixture } from "../support/world.ts";
import { copyWorld } from "./workcopy-support.ts";

const app = useFixture(startTestApp);
const REVIEWER = "reviewer@example.com";

const fileOn = async (w: Awaited<ReturnType<typeof copyWorld>>, p: string, branch = "main") => {
  const res = await api(w.repo.client).get("/repos/:repo*/-/file/:path*", {
    params: { repo: w.repo.repo, path: p },
    query: { branch },
  });
  return res.ok ? Buffer.from(res.body.content, "base64").toString() : null;
};

describe("quire merge, rebase, resolve", () => {
  it("merge prints each policy's result when refused, then merges once a review approves", async () => {
    const w = await copyWorld(app);
    try {
      await installPolicies(w.repo, { require_review: policies.require_review });
      await w.repo.grant(REVIEWER, "writer");
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "gated"], "c");
      await w.write("c/g.md", "gated\n");
      await w.json(["commit", "-m", "gate"], "c");

      const refused = await w.run(["merge"], "c", true);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/require_review +\S*failed\S* +needs an approving review at the head/);
      expect(refused.stdout).not.toMatch(/[│┌─]/);
      expect(refused.stderr).toContain("merge policies refused");
      const json = await w.run(["--json", "merge"], "c");
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        outcome: "denied",
        policies: [{ name: "require_review", pass: false }],
      });

      await app
        .as(REVIEWER)
        .post(`${w.repo.base}/review`, { branch: "gated", status: "approved", body: "ok" });
      const merged = await w.json(["merge"], "c");
      expect(merged).toMatchObject({ outcome: "merged", result: { branch: "gated", dry_run: false } });
      expect(await fileOn(w, "g.md")).toBe("gated\n");
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("merge and rebase show conflicts; resolve takes a side per path; a clean rebase moves the copy", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "x.md": "base x\n", "y.md": "base y\n" });
      await w.json(["clone", w.repo.repo, "c"]);
      await w.json(["branch", "topic"], "c");
      await w.write("c/x.md", "branch x\n");
      await w.write("c/y.md", "branch y\n");
      await w.json(["commit", "-m", "branch edits"], "c");
      await w.repo.commit("main", { "x.md": "main x\n", "y.md": "main y\n", "z.md": "main z\n" });

      const conflict = await w.run(["merge"], "c");
      expect(conflict.code).toBe(1);
      expect(conflict.stdout).toContain("x.md");
      expect(conflict.stdout).toContain("y.md");
      expect(conflict.stderr).toContain("quire resolve");
      const rebaseRefused = await w.run(["rebase"], "c");
      expect(rebaseRefused.code).toBe(1);
      expect(rebaseRefused.stderr).toContain("nothing changed");

      const needsAll = await w.run(["resolve", "x.md", "--take", "branch"], "c");
      expect(needsAll.code).toBe(1);
      expect(needsAll.stderr).toContain("y.md");

      const tookMain = z
        .looseObject({ remaining: z.array(z.looseObject({ path: z.string() })) })
        .parse(await w.json(["resolve", "y.md", "--take", "main"], "c"));
      expect(tookMain).toMatchObject({ resolved: [{ path: "y.md", took: "main" }], rebased: false });
      expect(tookMain.remaining.map((c) => c.path)).toEqual(["x.md"]);
      const tookBranch = await w.json(["resolve", "--take", "branch"], "c");
      expect(tookBranch).toMatchObject({
        resolved: [{ path: "x.md", took: "branch" }],
        remaining: [],
        rebased: true,
      });
      expect(await w.read("c/x.md")).toBe("branch x\n");
      expect(await w.read("c/y.md")).toBe("main y\n");
      expect(await w.read("c/z.md")).toBe("main z\n");
      expect(await w.json(["status"], "c")).toMatchObject({ changes: [] });

      await w.repo.commit("main", { "w.md": "main w\n" });
      const rebased = await w.json(["rebase"], "c");
      expect(rebased).toMatchObject({ outcome: "rebased", copy: { written: 1 } });
      expect(await w.read("c/w.md")).toBe("main w\n");
      expect(await w.json(["merge"], "c")).toMatchObject({ outcome: "merged" });
      expect(await fileOn(w, "x.md")).toBe("branch x\n");
      expect(await fileOn(w, "y.md")).toBe("main y\n");
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

describe("quire verify --chain", () => {
  it("recomputes the chain and names the first sequence whose hash does not hold after tampering", async () => {
    const w = await copyWorld(app);
    try {
      await w.repo.commit("main", { "a.md": "a\n" });
      const second = await w.repo.commit("main", { "b.md": "b\n" }, "second");
      await w.repo.branch("side", { files: { "s.md": "s\n" } });
      await w.repo.commit("main", { "c.md": "c\n" });
      const ok = await w.run(["verify", "--chain", w.repo.repo]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain("hash chain intact: 4 commit(s) on 2 branch(es)");

      await app.sql("UPDATE commits SET message = 'rewritten' WHERE repo_id = $1 AND sequence = $2", [
        w.repo.repoId,
        second,
      ]);
      const bad = await w.run(["verify", "--chain", w.repo.repo]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(`hash chain broken at sequence ${second}`);
      const json = JSON.parse((await w.run(["--json", "verify", "--chain", w.repo.repo])).stdout);
      expect(json).toMatchObject({ ok: false, firstBad: { sequence: second, branch: "main" } });
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("keeps the CLI's commit limit equal to the server's", () => {
    expect(MAX_COMMIT_FILES).toBe(MAX_FILES_PER_COMMIT);
  });
});
