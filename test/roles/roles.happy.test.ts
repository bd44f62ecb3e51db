import { describe, expect, it } from "vitest";
import { eventsOf, expectOneEvent, makeOrg, makeRepo, person } from "../orgs/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

async function repoOf(admin = person("alice")) {
  return { admin, repo: await makeRepo(app, admin, await makeOrg(app, admin), "team/docs") };
}

describe("setting a role", () => {
  it("answers 200 with identity, role, granted_at and granted_by", async () => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    const res = await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "writer" },
    });
    expectOk(res, 200);
    expect(res.body).toEqual({
      identity: bob,
      role: "writer",
      granted_at: expect.any(String),
      granted_by: admin,
    });
  });

  it.each(["reader", "writer", "maintainer", "admin"] as const)("grants %s", async (role) => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    expect(
      okBody(
        await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: bob },
          body: { role },
        }),
      ).role,
    ).toBe(role);
  });

  it("changes an existing role and records who changed it", async () => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    const carol = person("carol");
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: carol },
      body: { role: "admin" },
    });
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "reader" },
    });
    const res = await api(app.as(carol)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "maintainer" },
    });
    expectOk(res, 200);
    expect(res.body).toMatchObject({ identity: bob, role: "maintainer", granted_by: carol });
    const rows = await app.sql("SELECT role FROM repo_roles WHERE identity = $1", [bob]);
    expect(rows).toEqual([{ role: "maintainer" }]);
  });

  it("records com.svc.role.changed once per change, with source /repos/<name>", async () => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "writer" },
    });
    const event = await expectOneEvent(app, "com.svc.role.changed", `/repos/${repo}`, {
      repo,
      identity: bob,
      role: "writer",
      changed_by: admin,
    });
    expect(event.repo).toBe(repo);
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "reader" },
    });
    const events = await eventsOf(app, "com.svc.role.changed", `/repos/${repo}`);
    expect(events.map((e) => e.data["role"])).toEqual(["writer", "reader"]);
  });

  it("lets an org owner and a global admin manage roles without a repo role", async () => {
    const { admin, repo } = await repoOf();
    const org = repo.split("/")[0]!;
    const coOwner = person("coowner");
    await api(app.as(admin)).post("/orgs/:org/members/:identity", {
      params: { org, identity: coOwner },
      body: { role: "owner" },
    });
    expect(
      (
        await api(app.as(coOwner)).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: person("x") },
          body: { role: "reader" },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await api(app.as(ADMIN)).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: person("y") },
          body: { role: "reader" },
        })
      ).status,
    ).toBe(200);
  });
});

describe("listing roles", () => {
  it("lists every explicit assignment sorted by identity", async () => {
    const { admin, repo } = await repoOf(person("zz-admin"));
    const bob = person("bob");
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "reader" },
    });
    const res = await api(app.as(admin)).get("/repos/:repo*/-/roles", { params: { repo } });
    expectOk(res, 200);
    expect(res.body.roles).toEqual([
      { identity: bob, role: "reader", granted_at: expect.any(String), granted_by: admin },
      { identity: admin, role: "admin", granted_at: expect.any(String), granted_by: admin },
    ]);
  });

  it("does not list access that comes from org membership", async () => {
    const { admin, repo } = await repoOf();
    await api(app.as(admin)).post("/orgs/:org/members/:identity", {
      params: { org: repo.split("/")[0] ?? "", identity: person("member") },
      body: { role: "member" },
    });
    const roles = okBody(await api(app.as(admin)).get("/repos/:repo*/-/roles", { params: { repo } })).roles;
    expect(roles.map((r: { identity: string }) => r.identity)).toEqual([admin]);
  });
});

describe("revoking a role", () => {
  it("answers 204 and the assignment is gone", async () => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "writer" },
    });
    const res = await api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
    });
    expectOk(res, 204);
    const roles = okBody(await api(app.as(admin)).get("/repos/:repo*/-/roles", { params: { repo } })).roles;
    expect(roles.map((r: { identity: string }) => r.identity)).toEqual([admin]);
  });

  it("records com.svc.role.changed with an empty role", async () => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "writer" },
    });
    await api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", { params: { repo, identity: bob } });
    const events = await eventsOf(app, "com.svc.role.changed", `/repos/${repo}`);
    expect(events.map((e) => e.data)).toEqual([
      { repo, identity: bob, role: "writer", changed_by: admin },
      { repo, identity: bob, role: "", changed_by: admin },
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
  });
});
