import { describe, expect, it } from "vitest";
import { type ApiRes, api, okBody, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, expectError, expectOk, repoWithOwner, useFixture } from "../support/world.ts";
import { release, releaseKeys } from "./fixtures.ts";

const app = useFixture(startTestApp);

const names = (res: ApiRes<{ releases: { name: string }[] }>) => okBody(res).releases.map((r) => r.name);

describe("creating a release", () => {
  it("answers 201 with {name, sequence, notes, created_at, created_by}", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { "a.md": "one" });
    const res = await api(fx.client).post("/repos/:repo*/-/releases", {
      params: { repo: fx.repo },
      body: {
        name: "v1.2.3",
        sequence: seq,
        notes: "First.",
      },
    });
    expectOk(res, 201);
    expect(Object.keys(res.body).sort()).toEqual(releaseKeys);
    expect(res.body).toMatchObject({ name: "v1.2.3", sequence: seq, notes: "First.", created_by: fx.owner });
    expect(Number.isNaN(Date.parse(res.body.created_at))).toBe(false);
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "v1.2.3" },
        }),
      ),
    ).toEqual(res.body);
  });

  it("takes empty notes when none are sent, and refuses a created_by in the body, naming it", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { "a.md": "one" });
    const spoof = await unchecked(fx.client).post("/repos/:repo*/-/releases", {
      params: { repo: fx.repo },
      body: {
        name: "r1",
        sequence: seq,
        created_by: "someone@else.test",
      },
    });
    expect(expectError(spoof, 400, "VALIDATION_FAILED")).toBe("body.created_by: unknown field");
    const r = await release(fx, { name: "r1", sequence: seq });
    expect(r).toMatchObject({ notes: "", created_by: fx.owner });
  });

  it("may name a commit on any branch, and several releases may name one sequence", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "one" });
    await createBranch(fx, "rc");
    const onBranch = await commit(fx, "rc", { "b.md": "candidate" });
    expect(await release(fx, { name: "v2.0.0-rc.1", sequence: onBranch, notes: "" })).toMatchObject({
      sequence: onBranch,
    });
    expect(await release(fx, { name: "candidate_1", sequence: onBranch, notes: "" })).toMatchObject({
      sequence: onBranch,
    });
  });

  it("treats names case-sensitively and keeps '.', '_' and '-'", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { "a.md": "one" });
    for (const name of ["v1", "V1", "1.0_final-2", "a".repeat(100)])
      expect((await release(fx, { name, sequence: seq, notes: "" })).name).toBe(name);
  });

  it("records no event", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { "a.md": "one" });
    const before = await app.sql("SELECT id FROM events WHERE repo = $1", [fx.repo]);
    await release(fx, { name: "quiet", sequence: seq, notes: "" });
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "quiet" },
        })
      ).status,
    ).toBe(204);
    expect(await app.sql("SELECT id FROM events WHERE repo = $1", [fx.repo])).toEqual(before);
  });
});

describe("listing releases", () => {
  it("lists newest first: highest sequence first, then the latest created", async () => {
    const fx = await repoWithOwner(app);
    const s1 = await commit(fx, "main", { "a.md": "1" });
    const s2 = await commit(fx, "main", { "a.md": "2" });
    const s3 = await commit(fx, "main", { "a.md": "3" });
    await release(fx, { name: "v3", sequence: s3, notes: "" });
    await release(fx, { name: "v1", sequence: s1, notes: "" });
    await release(fx, { name: "v2", sequence: s2, notes: "" });
    await release(fx, { name: "v2-again", sequence: s2, notes: "" });
    const res = await api(fx.client).get("/repos/:repo*/-/releases", { params: { repo: fx.repo } });
    expectOk(res, 200);
    expect(Object.keys(res.body)).toEqual(["releases"]);
    expect(names(res)).toEqual(["v3", "v2-again", "v2", "v1"]);
    for (const r of res.body.releases) expect(Object.keys(r).sort()).toEqual(releaseKeys);
  });

  it("is empty for a repo without releases, and shows only the repo's own", async () => {
    const fx = await repoWithOwner(app);
    const other = await repoWithOwner(app);
    const seq = await commit(other, "main", { "a.md": "x" });
    await release(other, { name: "theirs", sequence: seq, notes: "" });
    expect(
      okBody(await api(fx.client).get("/repos/:repo*/-/releases", { params: { repo: fx.repo } })),
    ).toEqual({ releases: [] });
    expectError(
      await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
        params: { repo: fx.repo, release_name: "theirs" },
      }),
      404,
      "RELEASE_NOT_FOUND",
    );
  });
});

describe("deleting a release", () => {
  it("answers 204, after which it is gone and its name is free again", async () => {
    const fx = await repoWithOwner(app);
    const s1 = await commit(fx, "main", { "a.md": "1" });
    const s2 = await commit(fx, "main", { "a.md": "2" });
    await release(fx, { name: "v1", sequence: s1, notes: "old" });
    await release(fx, { name: "keep", sequence: s1, notes: "" });
    const res = await api(fx.client).delete("/repos/:repo*/-/releases/:release_name", {
      params: { repo: fx.repo, release_name: "v1" },
    });
    expectOk(res, 204);
    expect(res.body).toBe("");
    expectError(
      await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
        params: { repo: fx.repo, release_name: "v1" },
      }),
      404,
      "RELEASE_NOT_FOUND",
    );
    expect(
      names(await api(fx.client).get("/repos/:repo*/-/releases", { params: { repo: fx.repo } })),
    ).toEqual(["keep"]);
    expect(await release(fx, { name: "v1", sequence: s2, notes: "new" })).toMatchObject({ sequence: s2 });
  });
});
