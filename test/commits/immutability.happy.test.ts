import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { commit, createBranch, repoWithOwner } from "./fixtures.ts";

// Reads at (branch, at=N) are immutable: the same bytes forever, whatever is committed later.

let token: string;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  token = await app.idp.token(fx.owner);
});

/** The exact response: status and body bytes. */
async function raw(path: string): Promise<string> {
  const res = await fetch(app.url + fx.base + path, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return `${res.status} ${text}`;
}

describe("reads at a sequence", () => {
  it("answer byte-identically after later commits on main and on the branch", async () => {
    const s1 = await commit(fx, "main", {
      "a.md": "a1",
      "b.md": "b1",
      "c/c.md": "c1",
      "img.png": Buffer.from([0, 1]),
    });
    await createBranch(fx, "feature/x");
    const s2 = await commit(fx, "feature/x", { "a.md": "a on branch", "b.md": null, "d.md": "d" });
    const s3 = await commit(fx, "main", { "a.md": "a2", "e.md": "e" });

    const reads = [
      `/tree?at=${s1}`,
      `/tree?at=${s3}`,
      `/tree?at=${s3}&limit=2&after=a.md`,
      `/tree?branch=feature/x&at=${s1}`,
      `/tree?branch=feature/x&at=${s2}`,
      `/tree?branch=feature/x&at=${s2}&limit=1&after=b.md`,
      `/file/a.md?at=${s1}`,
      `/file/a.md?at=${s3}`,
      `/file/img.png?at=${s3}`,
      `/file/a.md?branch=feature/x&at=${s2}`,
      `/file/c/c.md?branch=feature/x&at=${s2}`,
      `/file/d.md?branch=feature/x&at=${s2}`,
      // Absent files stay absent.
      `/file/b.md?branch=feature/x&at=${s2}`,
      `/file/e.md?at=${s1}`,
      `/file/e.md?branch=feature/x&at=${s2}`,
    ];
    const before = await Promise.all(reads.map(raw));
    expect(before.filter((r) => r.startsWith("200 ")).length).toBe(12);

    // Later commits touching the same paths, on both sides, and on another branch.
    await commit(fx, "main", { "a.md": "a3", "b.md": null, "e.md": null, "c/c.md": "c2", "f.md": "f" });
    await commit(fx, "feature/x", { "a.md": "a on branch 2", "d.md": null, "b.md": "b back", "g.md": "g" });
    await createBranch(fx, "other");
    await commit(fx, "other", { "a.md": "other", "img.png": Buffer.from([2, 3, 0]) });
    await commit(fx, "main", { "img.png": null, "a.md": "a4" });
    expect((await fx.client.delete(`${fx.base}/branch/feature%2Fx`)).status).toBe(204);

    const after = await Promise.all(reads.map(raw));
    for (const [i, read] of reads.entries()) expect(after[i], read).toBe(before[i]);
    // The heads did move.
    expect(await raw("/file/a.md")).not.toBe(await raw(`/file/a.md?at=${s3}`));
  });

  it("the diff of a branch whose head no longer moves is unchanged by main commits elsewhere", async () => {
    const fx2 = fx;
    await commit(fx2, "main", { "x/base.md": "base" });
    await createBranch(fx2, "frozen");
    await commit(fx2, "frozen", { "x/base.md": "changed\n", "x/new.md": "new\n" });
    expect(
      (
        await api(fx2.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx2.repo, branch: "frozen" },
        })
      ).status,
    ).toBe(204);
    const before = await raw("/diff?branch=frozen");
    expect(before.startsWith("200 ")).toBe(true);
    await commit(fx2, "main", { "y/unrelated.md": "u" });
    await createBranch(fx2, "elsewhere");
    await commit(fx2, "elsewhere", { "x/base.md": "elsewhere" });
    expect(await raw("/diff?branch=frozen")).toBe(before);
  });
});
