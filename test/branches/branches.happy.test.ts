import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

const names = (res: { body: { branches: { name: string }[] } }) => res.body.branches.map((b) => b.name);

describe("creating a branch", () => {
  it("roots it at the current head of main, with base and head both at that sequence", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "one" });
    const head = await commit(fx, "main", { "b.md": "two" });
    const res = await fx.client.post(`${fx.base}/branch`, { name: "topic" });
    expect(res.status).toBe(201);
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
    const res = await fx.client.get(`${fx.base}/branch/feat`);
    expect(res.status).toBe(200);
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
    const res = await fx.client.get(`${fx.base}/branch/main`);
    expect(res.status).toBe(200);
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
    expect((await fx.client.delete(`${fx.base}/branch/gone`)).status).toBe(204);
    // No merge endpoint exists yet: mark one merged directly.
    await app.sql("UPDATE branches SET status = 'merged' WHERE repo_id = $1 AND name = 'landed'", [
      fx.repoId,
    ]);
  });

  it("lists active ready branches by default, drafts left out", async () => {
    const res = await fx.client.get(`${fx.base}/branches`);
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(["main", "ready-1"]);
    expect(res.body.branches.every((b: { status: string }) => b.status === "active")).toBe(true);
  });

  it("lists only drafts with draft=true", async () => {
    expect(names(await fx.client.get(`${fx.base}/branches?draft=true`))).toEqual(["draft-1"]);
  });

  it("lists drafts among the rest with include_draft=true", async () => {
    const res = await fx.client.get(`${fx.base}/branches?include_draft=true`);
    expect(names(res)).toEqual(["draft-1", "main", "ready-1"]);
  });

  it("lists merged and abandoned branches by status", async () => {
    const merged = await fx.client.get(`${fx.base}/branches?status=merged`);
    expect(names(merged)).toEqual(["landed"]);
    expect(merged.body.branches[0].status).toBe("merged");
    const abandoned = await fx.client.get(`${fx.base}/branches?status=abandoned`);
    expect(names(abandoned)).toEqual(["gone"]);
    expect(abandoned.body.branches[0].status).toBe("abandoned");
    expect(names(await fx.client.get(`${fx.base}/branches?status=active`))).toEqual(["main", "ready-1"]);
  });
});

describe("promoting a draft", () => {
  it("PATCH {draft:false} makes a draft ready, and it then lists by default", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "wip", true);
    const res = await fx.client.patch(`${fx.base}/branch/wip`, { draft: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "wip", draft: false, status: "active" });
    expect((await fx.client.get(`${fx.base}/branch/wip`)).body.draft).toBe(false);
    expect(names(await fx.client.get(`${fx.base}/branches`))).toContain("wip");
  });

  it("PATCH {draft:false} on a ready branch leaves it ready", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "done");
    const res = await fx.client.patch(`${fx.base}/branch/done`, { draft: false });
    expect(res.status).toBe(200);
    expect(res.body.draft).toBe(false);
  });
});

describe("deleting a branch", () => {
  it("marks it abandoned (204), keeps it readable and records com.svc.branch.abandoned", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "old");
    const res = await fx.client.delete(`${fx.base}/branch/old`);
    expect(res.status).toBe(204);
    expect(res.body).toBe("");
    expect((await fx.client.get(`${fx.base}/branch/old`)).body.status).toBe("abandoned");
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
      expect((await fx.client.get(`${fx.base}/branch/${seg}`)).body).toMatchObject({ name: "feature/x" });
      const patched = await fx.client.patch(`${fx.base}/branch/${seg}`, { draft: false });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ name: "feature/x", draft: false });

      const seq = await commit(fx, "feature/x", { "b.md": "branch" });
      const q = `branch=${encodeURIComponent("feature/x")}`;
      const tree = await fx.client.get(`${fx.base}/tree?${q}`);
      expect(tree.body.entries.map((e: { path: string }) => e.path)).toEqual(["a.md", "b.md"]);
      expect((await fx.client.get(`${fx.base}/file/b.md?${q}`)).status).toBe(200);
      expect((await fx.client.get(`${fx.base}/file/b.md/history?${q}`)).body.entries[0].sequence).toBe(seq);
      expect((await fx.client.get(`${fx.base}/diff?${q}`)).body.changes[0].path).toBe("b.md");
      expect((await fx.client.get(`${fx.base}/commit/${seq}`)).body.branch).toBe("feature/x");

      expect((await fx.client.delete(`${fx.base}/branch/${seg}`)).status).toBe(204);
      expect((await fx.client.get(`${fx.base}/branch/${seg}`)).body.status).toBe("abandoned");
    });
  }

  it("do not collide with a sibling of the same prefix", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "feature");
    await createBranch(fx, "feature/y");
    expect((await fx.client.get(`${fx.base}/branch/feature`)).body.name).toBe("feature");
    expect((await fx.client.get(`${fx.base}/branch/feature/y`)).body.name).toBe("feature/y");
  });
});
