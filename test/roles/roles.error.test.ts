import { describe, expect, it } from "vitest";
import {
  eventsOf,
  expectError,
  expectRefusedWithoutChange,
  makeOrg,
  person,
  unique,
} from "../orgs/fixtures.ts";
import { api, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { errorOf, useFixture, world } from "../support/world.ts";

const app = useFixture(startTestApp);

async function repoOf() {
  const org = await world(app).org({ name: unique("org"), owner: person("alice") });
  return { admin: org.owner, repo: (await org.repo({ name: "team/docs" })).repo };
}

describe("setting a role from a bad request", () => {
  it.each([
    ["an unknown role", { role: "owner" }],
    ["an upper-case role", { role: "Writer" }],
    ["an empty role", { role: "" }],
    ["a null role", { role: null }],
    ["no role", {}],
  ])("answers 400 naming body.role for %s, changing nothing", async (_why, body) => {
    const { admin, repo } = await repoOf();
    const res = await expectRefusedWithoutChange(
      app,
      () =>
        unchecked(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: person("bob") },
          body,
        }),
      400,
      "VALIDATION_FAILED",
    );
    expect(errorOf(res).error).toContain("body.role");
  });

  it("answers 400 naming path.identity for an identity with a space", async () => {
    const { admin, repo } = await repoOf();
    const res = await expectRefusedWithoutChange(
      app,
      () => app.as(admin).put(`/repos/${repo}/-/roles/bad%20name`, { role: "reader" }),
      400,
      "VALIDATION_FAILED",
    );
    expect(errorOf(res).error).toContain("path.identity");
  });

  it("does not overwrite an existing role when the new one is invalid", async () => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "writer" },
    });
    await expectRefusedWithoutChange(
      app,
      () =>
        unchecked(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: bob },
          body: { role: "superuser" },
        }),
      400,
      "VALIDATION_FAILED",
    );
    expect(await app.sql("SELECT role FROM repo_roles WHERE identity = $1", [bob])).toEqual([
      { role: "writer" },
    ]);
  });
});

describe("revoking a role that is not there", () => {
  it("answers 404 ROLE_NOT_FOUND and records no event", async () => {
    const { admin, repo } = await repoOf();
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: person("nobody") },
        }),
      404,
      "ROLE_NOT_FOUND",
    );
    expect(await eventsOf(app, "com.svc.role.changed", `/repos/${repo}`)).toHaveLength(0);
  });

  it("answers 404 ROLE_NOT_FOUND the second time", async () => {
    const { admin, repo } = await repoOf();
    const bob = person("bob");
    await api(app.as(admin)).put("/repos/:repo*/-/roles/:identity", {
      params: { repo, identity: bob },
      body: { role: "reader" },
    });
    expect(
      (
        await api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: bob },
        })
      ).status,
    ).toBe(204);
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", { params: { repo, identity: bob } }),
      404,
      "ROLE_NOT_FOUND",
    );
    expect(await eventsOf(app, "com.svc.role.changed", `/repos/${repo}`)).toHaveLength(2);
  });

  it("answers 404 ROLE_NOT_FOUND for an org member, whose access is not a repo role", async () => {
    const { admin, repo } = await repoOf();
    const member = person("member");
    await unchecked(app.as(admin)).post("/orgs/:org/members/:identity", {
      params: { org: repo.split("/")[0] ?? "", identity: member },
      body: { role: "member" },
    });
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", { params: { repo, identity: member } }),
      404,
      "ROLE_NOT_FOUND",
    );
  });
});

describe("roles on a repo that is not there", () => {
  it("answers 404 REPO_NOT_FOUND for list, set and revoke", async () => {
    const admin = person("alice");
    const org = await makeOrg(app, admin);
    const as = app.as(admin);
    const bob = person("bob");
    expectError(
      await api(as).get("/repos/:repo*/-/roles", { params: { repo: `${org}/missing` } }),
      404,
      "REPO_NOT_FOUND",
    );
    await expectRefusedWithoutChange(
      app,
      () =>
        api(as).put("/repos/:repo*/-/roles/:identity", {
          params: { repo: `${org}/missing`, identity: bob },
          body: { role: "reader" },
        }),
      404,
      "REPO_NOT_FOUND",
    );
    await expectRefusedWithoutChange(
      app,
      () =>
        api(as).delete("/repos/:repo*/-/roles/:identity", {
          params: { repo: `${org}/missing`, identity: bob },
        }),
      404,
      "REPO_NOT_FOUND",
    );
  });

  it("answers 405 for a method the roles path does not have", async () => {
    const { admin, repo } = await repoOf();
    const res = await app.as(admin).post(`/repos/${repo}/-/roles/${person("bob")}`, { role: "reader" });
    expectError(res, 405, "METHOD_NOT_ALLOWED");
    expect(res.headers.get("allow")).toBe("DELETE, PUT");
  });
});
