import { describe, expect, it } from "vitest";
import { resolveView } from "../../shared/commits/view.ts";
import { readPolicySources } from "../../shared/policy/sources.ts";
import { sha256hex } from "../commits/fixtures.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";
import { input, REQUIRE_REVIEW } from "./fixtures.ts";

const app = useFixture(startTestApp);

/** The policy files of `branch` at `at`, as name → text. */
async function policiesAt(fx: RepoFixture, branch: string, at?: number) {
  const { pool, blobs } = app.server.ctx;
  const sources = await readPolicySources(
    pool,
    blobs,
    fx.repoId,
    await resolveView(pool, fx.repoId, branch, at),
  );
  for (const s of sources) expect(s.sha256.toString("hex")).toBe(sha256hex(s.source));
  return sources.map((s) => [s.name, s.source.toString("utf8")]);
}

describe("readPolicySources", () => {
  it("reads only <name>.rego files directly under .svc/policy/, sorted by name", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", {
      ".svc/policy/b.rego": "B",
      ".svc/policy/a-b.rego": "AB",
      ".svc/policy/a.rego": "A",
      ".svc/policy/README.md": "not a policy",
      ".svc/policy/.rego": "no name",
      ".svc/policy/c.rego.bak": "a backup, not a policy",
      ".svc/policy/sub/c.rego": "in a sub-folder",
      ".svc/policy/sub/deeper/d.rego": "deeper still",
      ".svc/policy/sub0.rego": "right after the sub-folder",
      ".svc/policy.rego": "beside the folder",
      ".svc/policy-x/e.rego": "a sibling folder",
      ".svc/policyz/f.rego": "another sibling",
      "docs/g.rego": "elsewhere",
      "z.md": "last",
    });
    expect(await policiesAt(fx, "main")).toEqual([
      ["a", "A"],
      ["a-b", "AB"],
      ["b", "B"],
      ["sub0", "right after the sub-folder"],
    ]);
  });

  it("reads the files at the view's sequence: later edits, additions and deletions are not seen", async () => {
    const fx = await repoWithOwner(app);
    const first = await commit(fx, "main", { ".svc/policy/a.rego": "A1", ".svc/policy/b.rego": "B1" });
    const second = await commit(fx, "main", {
      ".svc/policy/a.rego": "A2",
      ".svc/policy/b.rego": null,
      ".svc/policy/c.rego": "C2",
    });
    expect(await policiesAt(fx, "main", first)).toEqual([
      ["a", "A1"],
      ["b", "B1"],
    ]);
    expect(await policiesAt(fx, "main", second)).toEqual([
      ["a", "A2"],
      ["c", "C2"],
    ]);
    expect(await policiesAt(fx, "main", first - 1)).toEqual([]);
  });

  it("on a branch: the branch's own files over main's at the branch's base", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { ".svc/policy/a.rego": "A", ".svc/policy/b.rego": "B" });
    await createBranch(fx, "feature");
    await commit(fx, "feature", { ".svc/policy/b.rego": null, ".svc/policy/z.rego": "Z" });
    await commit(fx, "main", { ".svc/policy/m.rego": "after the branch's base" });
    expect(await policiesAt(fx, "feature")).toEqual([
      ["a", "A"],
      ["z", "Z"],
    ]);
    expect((await policiesAt(fx, "main")).map(([n]) => n)).toEqual(["a", "b", "m"]);
  });

  it("pages through a folder of more than one page, and past a large sub-folder", async () => {
    const fx = await repoWithOwner(app);
    const files: Record<string, string> = {};
    for (let i = 0; i < 130; i++) files[`.svc/policy/p${String(i).padStart(3, "0")}.rego`] = `P${i}`;
    for (let i = 0; i < 150; i++) files[`.svc/policy/o/x${i}.rego`] = `skipped ${i}`;
    files[".svc/policy/q.rego"] = "Q";
    await commit(fx, "main", files);
    const names = (await policiesAt(fx, "main")).map(([n]) => n);
    expect(names).toHaveLength(131);
    expect(names[0]).toBe("p000");
    expect(names.at(-2)).toBe("p129");
    expect(names.at(-1)).toBe("q");
  });

  it("a repo without policies has none", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "no policies here" });
    expect(await policiesAt(fx, "main")).toEqual([]);
  });

  it("what it reads is what the engine evaluates", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { ".svc/policy/require_review.rego": REQUIRE_REVIEW });
    const { pool, blobs, policies } = app.server.ctx;
    const sources = await readPolicySources(
      pool,
      blobs,
      fx.repoId,
      await resolveView(pool, fx.repoId, "main", undefined),
    );
    expect(await policies.evaluate(pool, sources, input({ reviews: [] }))).toEqual([
      { name: "require_review", pass: false, reason: "an approved review of the head is required" },
    ]);
  });
});
