import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { api, type Options } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import {
  commit,
  createBranch,
  expectOk,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";

const app = useFixture(() => startTestApp({ SVC_BLOB_THRESHOLD_BYTES: "64" }));

/** Marks a branch closed (merged or abandoned) `daysAgo` days ago. */
async function closeBranch(fx: RepoFixture, name: string, status: "merged" | "abandoned", daysAgo: number) {
  await app.sql(
    `UPDATE branches SET status = $3, merged_at = CASE WHEN $3 = 'merged' THEN now() - make_interval(days => $4) END,
                         updated_at = now() - make_interval(days => $4)
     WHERE repo_id = $1 AND name = $2`,
    [fx.repoId, name, status, daysAgo],
  );
}

async function purge(fx: RepoFixture, body: Options<"POST", "/repos/:repo*/-/purge">["body"]) {
  const res = await api(fx.client).post("/repos/:repo*/-/purge", { params: { repo: fx.repo }, body });
  expectOk(res, 200);
  return res.body;
}

describe("purge", () => {
  it("removes merged and abandoned branches closed before the cutoff, with their commits and unused content", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "keep.md": "on main" });
    await createBranch(fx, "old-merged");
    await commit(fx, "old-merged", { "m.md": "merged work", "big.bin": "x".repeat(500) });
    await createBranch(fx, "old-abandoned");
    await commit(fx, "old-abandoned", { "a.md": "abandoned work" });
    await createBranch(fx, "recent");
    await commit(fx, "recent", { "r.md": "recent work" });
    await createBranch(fx, "active");
    await commit(fx, "active", { "x.md": "still going" });
    await closeBranch(fx, "old-merged", "merged", 40);
    await closeBranch(fx, "old-abandoned", "abandoned", 40);
    await closeBranch(fx, "recent", "abandoned", 1);

    const report = await purge(fx, { older_than: "30d" });
    expect(report).toMatchObject({
      older_than: "30d",
      dry_run: false,
      commits: 2,
      file_changes: 3,
      contents: 3,
    });
    expect(report.branches.map((b: { name: string }) => b.name)).toEqual(["old-abandoned", "old-merged"]);
    expect(report.bytes).toBe("merged work".length + 500 + "abandoned work".length);

    const left = await app.sql<{ name: string }>(
      "SELECT name FROM branches WHERE repo_id = $1 ORDER BY name",
      [fx.repoId],
    );
    expect(left.map((b) => b.name)).toEqual(["active", "main", "recent"]);
    expect(
      (
        await api(fx.client).get("/repos/:repo*/-/file/:path*", {
          params: { repo: fx.repo, path: "keep.md" },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await api(fx.client).get("/repos/:repo*/-/file/:path*", {
          params: { repo: fx.repo, path: "x.md" },
          query: { branch: "active" },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "old-merged" },
        })
      ).status,
    ).toBe(404);
  });

  it("reports without removing anything on a dry run", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "gone");
    await commit(fx, "gone", { "g.md": "bye" });
    await closeBranch(fx, "gone", "abandoned", 10);
    const before = await snapshot(app, fx);
    const report = await purge(fx, { older_than: "72h", dry_run: true });
    expect(report).toMatchObject({ dry_run: true, commits: 1, file_changes: 1, contents: 1 });
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("keeps a branch whose commit a release names, and content that main still uses", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "shared.md": "same bytes" });
    await createBranch(fx, "released");
    const released = await commit(fx, "released", { "rel.md": "release me" });
    await createBranch(fx, "dup");
    await commit(fx, "dup", { "copy.md": "same bytes" });
    await app.sql(
      "INSERT INTO releases (repo_id, name, sequence, created_by) VALUES ($1, 'v1', $2, 'test')",
      [fx.repoId, released],
    );
    await closeBranch(fx, "released", "merged", 100);
    await closeBranch(fx, "dup", "abandoned", 100);
    const report = await purge(fx, { older_than: "1d" });
    expect(report.branches.map((b: { name: string }) => b.name)).toEqual(["dup"]);
    expect(report.contents).toBe(0);
    expect(
      (
        await api(fx.client).get("/repos/:repo*/-/file/:path*", {
          params: { repo: fx.repo, path: "shared.md" },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await api(fx.client).get("/repos/:repo*/-/file/:path*", {
          params: { repo: fx.repo, path: "rel.md" },
          query: { branch: "released" },
        })
      ).status,
    ).toBe(200);
  });

  it("removes blobs of content it removes", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "blobby");
    await commit(fx, "blobby", { "large.txt": "L".repeat(1000) });
    const [row] = await app.sql<{ blob_key: string }>(
      "SELECT blob_key FROM contents WHERE repo_id = $1 AND blob_key IS NOT NULL",
      [fx.repoId],
    );
    await app.server.ctx.blobs.get(row!.blob_key);
    await closeBranch(fx, "blobby", "abandoned", 5);
    await purge(fx, { older_than: "1d" });
    await expect(app.server.ctx.blobs.get(row!.blob_key)).rejects.toThrow();
  });

  it("takes an issue's link to a purged commit with it (docs/issues.md)", async () => {
    const fx = await repoWithOwner(app);
    const issue = (await fx.client.post(`${fx.base}/issues`, { title: "Tracked" })).body as {
      number: number;
    };
    await createBranch(fx, "gone");
    const sequence = await commit(fx, "gone", { "g.md": "gone soon" });
    const linked = await fx.client.post(`${fx.base}/issues/${issue.number}/refs`, {
      ref_type: "commit",
      ref_id: String(sequence),
    });
    expect(linked.status).toBe(201);
    await closeBranch(fx, "gone", "abandoned", 40);
    await purge(fx, { older_than: "30d" });
    expect(await app.sql("SELECT 1 FROM issue_refs WHERE repo_id = $1", [fx.repoId])).toEqual([]);
    const refs = await fx.client.get(`${fx.base}/issues/${issue.number}/refs`);
    expect(refs.status).toBe(200);
    expect((refs.body as { refs: unknown[] }).refs).toEqual([]);
  });
});
