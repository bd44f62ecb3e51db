import { describe, expect, it } from "vitest";
import { commitBody, expectOneEvent, makeOrg, makeRepo, person } from "../orgs/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

describe("creating a repo", () => {
  it("answers 201 with name, owner, created_at and created_by", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const name = `${org}/docs`;
    const res = await api(app.as(alice)).post("/repos", { body: { owner: org, name } });
    expectOk(res, 201);
    expect(res.body).toEqual({ name, owner: org, created_at: expect.any(String), created_by: alice });
    expect(okBody(await api(app.as(alice)).get("/repos/:repo*", { params: { repo: name } }))).toEqual(
      res.body,
    );
  });

  it("takes names with several slashes and serves them under their full path", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const name = `${org}/team/docs`;
    expect((await api(app.as(alice)).post("/repos", { body: { owner: org, name } })).status).toBe(201);
    const got = await api(app.as(alice)).get("/repos/:repo*", { params: { repo: name } });
    expectOk(got, 200);
    expect(got.body).toMatchObject({ name, owner: org });
    const branches = await api(app.as(alice)).get("/repos/:repo*/-/branches", { params: { repo: name } });
    expectOk(branches, 200);
    expect(branches.body.branches.map((b: { name: string }) => b.name)).toEqual(["main"]);
  });

  it("keeps a repo and a repo nested under its path apart", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const outer = await makeRepo(app, alice, org, "team");
    const inner = await makeRepo(app, alice, org, "team/docs");
    expect(
      (
        await api(app.as(alice)).post("/repos/:repo*/-/commit", {
          params: { repo: inner },
          body: commitBody("main"),
        })
      ).status,
    ).toBe(201);
    expect(okBody(await api(app.as(alice)).get("/repos/:repo*", { params: { repo: outer } })).name).toBe(
      outer,
    );
    expect(okBody(await api(app.as(alice)).get("/repos/:repo*", { params: { repo: inner } })).name).toBe(
      inner,
    );
    expect(
      okBody(
        await api(app.as(alice)).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: outer, branch: "main" },
        }),
      ).head_sequence,
    ).toBe(0);
    expect(
      okBody(
        await api(app.as(alice)).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: inner, branch: "main" },
        }),
      ).head_sequence,
    ).toBe(1);
  });

  it("takes the longest name allowed: 8 segments", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const name = await makeRepo(app, alice, org, "a/b/c/d/e/f/g");
    expect(
      (
        await api(app.as(alice)).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: name, branch: "main" },
        })
      ).status,
    ).toBe(200);
  });

  it("starts with an empty active main at sequence 0", async () => {
    const alice = person("alice");
    const repo = await makeRepo(app, alice, await makeOrg(app, alice));
    const res = await api(app.as(alice)).get("/repos/:repo*/-/branch/:branch*", {
      params: { repo, branch: "main" },
    });
    expectOk(res, 200);
    expect(res.body).toMatchObject({ name: "main", head_sequence: 0, base_sequence: 0, status: "active" });
    expect(okBody(await api(app.as(alice)).get("/repos/:repo*/-/tree", { params: { repo } }))).toEqual({
      entries: [],
    });
  });

  it("makes the creator its admin", async () => {
    const alice = person("alice");
    const repo = await makeRepo(app, alice, await makeOrg(app, alice));
    const res = await api(app.as(alice)).get("/repos/:repo*/-/roles", { params: { repo } });
    expectOk(res, 200);
    expect(res.body.roles).toEqual([
      { identity: alice, role: "admin", granted_at: expect.any(String), granted_by: alice },
    ]);
  });

  it("lets a global admin create a repo in any org, and become its admin", async () => {
    const org = await makeOrg(app, person("alice"));
    const res = await api(app.as(ADMIN)).post("/repos", { body: { owner: org, name: `${org}/by-admin` } });
    expectOk(res, 201);
    expect(res.body.created_by).toBe(ADMIN);
    const roles = okBody(
      await api(app.as(ADMIN)).get("/repos/:repo*/-/roles", { params: { repo: `${org}/by-admin` } }),
    ).roles;
    expect(roles).toEqual([expect.objectContaining({ identity: ADMIN, role: "admin" })]);
  });

  it("records com.svc.repo.created once, with source /repos/<name>", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const repo = await makeRepo(app, alice, org, "team/docs");
    const event = await expectOneEvent(app, "com.svc.repo.created", `/repos/${repo}`, {
      repo,
      owner: org,
      created_by: alice,
    });
    expect(event.repo).toBe(repo);
  });
});

describe("listing repos", () => {
  it("lists the caller's readable repos in a {repos} body, sorted by name", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const b = await makeRepo(app, alice, org, "b");
    const a = await makeRepo(app, alice, org, "a/x");
    const res = await api(app.as(alice)).get("/repos");
    expectOk(res, 200);
    expect(res.body.repos).toEqual([
      { name: a, owner: org, created_at: expect.any(String), created_by: alice },
      { name: b, owner: org, created_at: expect.any(String), created_by: alice },
    ]);
    expect(okBody(await api(app.as(alice)).get("/orgs/:org/repos", { params: { org } }))).toEqual(res.body);
  });

  it("lists only the org's repos under /orgs/{org}/repos", async () => {
    const alice = person("alice");
    const one = await makeOrg(app, alice);
    const two = await makeOrg(app, alice);
    const r1 = await makeRepo(app, alice, one);
    const r2 = await makeRepo(app, alice, two);
    const names = async (org: string) =>
      okBody(await api(app.as(alice)).get("/orgs/:org/repos", { params: { org } })).repos.map(
        (r: { name: string }) => r.name,
      );
    expect(await names(one)).toEqual([r1]);
    expect(await names(two)).toEqual([r2]);
  });
});

describe("deleting a repo", () => {
  it("answers 204 for the org owner and removes its branches, commits, contents and roles", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const repo = await makeRepo(app, alice, org, "team/docs");
    expect(
      (
        await api(app.as(alice)).post("/repos/:repo*/-/commit", {
          params: { repo },
          body: commitBody("main"),
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await api(app.as(alice)).post("/repos/:repo*/-/branch", {
          params: { repo },
          body: { name: "feature" },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await api(app.as(alice)).post("/repos/:repo*/-/commit", {
          params: { repo },
          body: commitBody("feature", "b.md"),
        })
      ).status,
    ).toBe(201);
    await api(app.as(alice)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: person("bob") },
      body: { role: "reader" },
    });
    const [{ id }] = (await app.sql<{ id: number }>("SELECT id FROM repos WHERE name = $1", [repo])) as [
      { id: number },
    ];

    const res = await api(app.as(alice)).delete("/repos/:repo*", { params: { repo } });
    expectOk(res, 204);
    expect(res.body).toBe("");
    expect((await api(app.as(alice)).get("/repos/:repo*", { params: { repo } })).status).toBe(404);
    for (const table of ["repos", "branches", "commits", "repo_roles", "contents", "file_changes"]) {
      const column = table === "repos" ? "id" : "repo_id";
      expect(await app.sql(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [id]), table).toHaveLength(0);
    }
    expect(okBody(await api(app.as(alice)).get("/repos")).repos).toEqual([]);
  });

  it("records com.svc.repo.deleted once, with deleted_by", async () => {
    const alice = person("alice");
    const repo = await makeRepo(app, alice, await makeOrg(app, alice));
    expect((await api(app.as(alice)).delete("/repos/:repo*", { params: { repo } })).status).toBe(204);
    await expectOneEvent(app, "com.svc.repo.deleted", `/repos/${repo}`, { repo, deleted_by: alice });
  });

  it("lets a global admin delete any repo", async () => {
    const alice = person("alice");
    const repo = await makeRepo(app, alice, await makeOrg(app, alice));
    expect((await api(app.as(ADMIN)).delete("/repos/:repo*", { params: { repo } })).status).toBe(204);
    await expectOneEvent(app, "com.svc.repo.deleted", `/repos/${repo}`, { repo, deleted_by: ADMIN });
  });

  it("frees the name: a new repo with it starts empty", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const repo = await makeRepo(app, alice, org);
    expect(
      (
        await api(app.as(alice)).post("/repos/:repo*/-/commit", {
          params: { repo },
          body: commitBody("main"),
        })
      ).status,
    ).toBe(201);
    expect((await api(app.as(alice)).delete("/repos/:repo*", { params: { repo } })).status).toBe(204);
    expect((await api(app.as(alice)).post("/repos", { body: { owner: org, name: repo } })).status).toBe(201);
    expect(
      okBody(
        await api(app.as(alice)).get("/repos/:repo*/-/branch/:branch*", { params: { repo, branch: "main" } }),
      ).head_sequence,
    ).toBe(0);
    expect(
      (await api(app.as(alice)).get("/repos/:repo*/-/file/:path*", { params: { repo, path: "a.md" } }))
        .status,
    ).toBe(404);
  });
});
