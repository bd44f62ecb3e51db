import { beforeAll, describe, expect, it } from "vitest";
import { type ApiRes, api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import {
  commit,
  createBranch,
  expectOk,
  expectStatus,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";

const app = useFixture(startTestApp);

const names = (res: ApiRes<{ branches: { name: string }[] }>) => okBody(res).branches.map((b) => b.name);

describe("creating a branch", () => {
  it("roots it at the current head of main, with base and head both at that sequence", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "one" });
    const head = await commit(fx, "main", { "b.md": "two" });
    const res = await api(fx.client).post("/repos/:repo*/-/branch", {
      params: { repo: fx.repo },
      body: { name: "topic" },
    });
    expectOk(res, 201);
    expect(res.body).toMatchObject({
      name: "topic",
      base_sequence: head,
      head_sequence: head,
      status: "active",
      draft: false,
      created_by: fx.owner,
    });
    expect(Number.isNaN(Date.parse(res.body.created_at))).toBe(false);
    expect(Object.keys(res.body).sort()).toEqual([
      "auto_merge",
      "auto_merge_at",
      "auto_merge_by",
      "base_sequence",
      "created_at",
      "created_by",
      "draft",
      "head_sequence",
      "name",
      "status",
    ]);
  });

  it("on an empty repo roots the branch at sequence 0", async () => {
    const fx = await repoWithOwner(app);
    const b = await createBranch(fx, "early");
    expect(b).toMatchObject({ base_sequence: 0, head_sequence: 0 });
  });

  it("records the draft flag given at creation", async () => {
    const fx = await repoWithOwner(app);
    expect(await createBranch(fx, "wip", true)).toMatchObject({ draft: true });
    expect(await createBranch(fx, "ready", false)).toMatchObject({ draft: false });
  });

  it("emits com.svc.branch.created with the base sequence", async () => {
    const fx = await repoWithOwner(app);
    const head = await commit(fx, "main", { "a.md": "x" });
    await createBranch(fx, "evented");
    const rows = await app.sql<{ data: unknown }>(
      "SELECT data FROM events WHERE repo = $1 AND type = 'com.svc.branch.created'",
      [fx.repo],
    );
    expect(rows.map((r) => r.data)).toEqual([
      { repo: fx.repo, branch: "evented", base_sequence: head, created_by: fx.owner },
    ]);
  });
});

describe("getting a branch", () => {
  it("returns its head, base, status and draft flag, and follows commits on it", async () => {
    const fx = await repoWithOwner(app);
    const base = await commit(fx, "main", { "a.md": "x" });
    await createBranch(fx, "feat");
    const seq = await commit(fx, "feat", { "b.md": "y" });
    const res = await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
      params: { repo: fx.repo, branch: "feat" },
    });
    expectOk(res, 200);
    expect(res.body).toMatchObject({
      name: "feat",
      base_sequence: base,
      head_sequence: seq,
      status: "active",
      draft: false,
    });
  });

  it("returns main", async () => {
    const fx = await repoWithOwner(app);
    const res = await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
      params: { repo: fx.repo, branch: "main" },
    });
    expectOk(res, 200);
    expect(res.body).toMatchObject({ name: "main", status: "active", head_sequence: 0 });
  });
});

describe("listing branches", () => {
  let fx: RepoFixture;
  beforeAll(async () => {
    fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "x" });
    await createBranch(fx, "ready-1");
    await createBranch(fx, "draft-1", true);
    await createBranch(fx, "gone");
    await createBranch(fx, "landed");
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "gone" },
        })
      ).status,
    ).toBe(204);
    // No merge endpoint exists yet: mark one merged directly.
    await app.sql("UPDATE branches SET status = 'merged' WHERE repo_id = $1 AND name = 'landed'", [
      fx.repoId,
    ]);
  });

  it("lists active ready branches by default, drafts left out", async () => {
    const res = await api(fx.client).get("/repos/:repo*/-/branches", { params: { repo: fx.repo } });
    expectOk(res, 200);
    expect(names(res)).toEqual(["main", "ready-1"]);
    expect(res.body.branches.every((b: { status: string }) => b.status === "active")).toBe(true);
  });

  it("lists only drafts with draft=true", async () => {
    expect(
      names(
        await api(fx.client).get("/repos/:repo*/-/branches", {
          params: { repo: fx.repo },
          query: { draft: "true" },
        }),
      ),
    ).toEqual(["draft-1"]);
  });

  it("lists drafts among the rest with include_draft=true", async () => {
    const res = await api(fx.client).get("/repos/:repo*/-/branches", {
      params: { repo: fx.repo },
      query: { include_draft: "true" },
    });
    expect(names(res)).toEqual(["draft-1", "main", "ready-1"]);
  });

  it("lists merged and abandoned branches by status", async () => {
    const merged = await api(fx.client).get("/repos/:repo*/-/branches", {
      params: { repo: fx.repo },
      query: { status: "merged" },
    });
    expectOk(merged, 200);
    expect(names(merged)).toEqual(["landed"]);
    expect(merged.body.branches[0]?.status).toBe("merged");
    const abandoned = await api(fx.client).get("/repos/:repo*/-/branches", {
      params: { repo: fx.repo },
      query: { status: "abandoned" },
    });
    expectOk(abandoned, 200);
    expect(names(abandoned)).toEqual(["gone"]);
    expect(abandoned.body.branches[0]?.status).toBe("abandoned");
    expect(
      names(
        await api(fx.client).get("/repos/:repo*/-/branches", {
          params: { repo: fx.repo },
          query: { status: "active" },
        }),
      ),
    ).toEqual(["main", "ready-1"]);
  });
});

describe("promoting a draft", () => {
  it("PATCH {draft:false} makes a draft ready, and it then lists by default", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "wip", true);
    const res = await api(fx.client).patch("/repos/:repo*/-/branch/:branch*", {
      params: { repo: fx.repo, branch: "wip" },
      body: { draft: false },
    });
    expectOk(res, 200);
    expect(res.body).toMatchObject({ name: "wip", draft: false, status: "active" });
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "wip" },
        }),
      ).draft,
    ).toBe(false);
    expect(
      names(await api(fx.client).get("/repos/:repo*/-/branches", { params: { repo: fx.repo } })),
    ).toContain("wip");
  });

  it("PATCH {draft:false} on a ready branch leaves it ready", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "done");
    const res = await api(fx.client).patch("/repos/:repo*/-/branch/:branch*", {
      params: { repo: fx.repo, branch: "done" },
      body: { draft: false },
    });
    expectOk(res, 200);
    expect(res.body.draft).toBe(false);
  });
});

describe("deleting a branch", () => {
  it("marks it abandoned (204), keeps it readable and records com.svc.branch.abandoned", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "old");
    const res = await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
      params: { repo: fx.repo, branch: "old" },
    });
    expectOk(res, 204);
    expect(res.body).toBe("");
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "old" },
        }),
      ).status,
    ).toBe("abandoned");
    const rows = await app.sql<{ data: unknown; source: string }>(
      "SELECT data, source FROM events WHERE repo = $1 AND type = 'com.svc.branch.abandoned'",
      [fx.repo],
    );
    expect(rows).toEqual([
      { data: { repo: fx.repo, branch: "old", abandoned_by: fx.owner }, source: `/repos/${fx.repo}` },
    ]);
  });
});

describe("branch names with slashes", () => {
  for (const [label, seg] of [
    ["plain", "feature/x"],
    ["percent-encoded", "feature%2Fx"],
  ] as const) {
    it(`work in get, patch, delete and as a query or body value (${label})`, async () => {
      const fx = await repoWithOwner(app);
      await commit(fx, "main", { "a.md": "main" });
      expect(await createBranch(fx, "feature/x", true)).toMatchObject({ name: "feature/x" });
      // `seg` goes into the path as written (it may be percent-encoded already): the raw client.
      const branchPath = `${fx.base}/branch/${seg}`;
      expect(expectStatus(await fx.client.get(branchPath), 200)).toMatchObject({ name: "feature/x" });
      const patched = await fx.client.patch(branchPath, { draft: false });
      expect(expectStatus(patched, 200)).toMatchObject({ name: "feature/x", draft: false });

      const seq = await commit(fx, "feature/x", { "b.md": "branch" });
      const at = { params: { repo: fx.repo }, query: { branch: "feature/x" } };
      const file = { params: { ...at.params, path: "b.md" }, query: at.query };
      const tree = okBody(await api(fx.client).get("/repos/:repo*/-/tree", at));
      expect(tree.entries.map((e) => e.path)).toEqual(["a.md", "b.md"]);
      expect((await api(fx.client).get("/repos/:repo*/-/file/:path*", file)).status).toBe(200);
      const history = okBody(await api(fx.client).get("/repos/:repo*/-/file/:path*/history", file));
      expect(history.entries[0]?.sequence).toBe(seq);
      expect(okBody(await api(fx.client).get("/repos/:repo*/-/diff", at)).changes[0]?.path).toBe("b.md");
      expect(
        okBody(
          await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
            params: { repo: fx.repo, sequence: String(seq) },
          }),
        ).branch,
      ).toBe("feature/x");

      expect((await fx.client.delete(branchPath)).status).toBe(204);
      expect((expectStatus(await fx.client.get(branchPath), 200) as { status: string }).status).toBe(
        "abandoned",
      );
    });
  }

  it("do not collide with a sibling of the same prefix", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "feature");
    await createBranch(fx, "feature/y");
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "feature" },
        }),
      ).name,
    ).toBe("feature");
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "feature/y" },
        }),
      ).name,
    ).toBe("feature/y");
  });
});
