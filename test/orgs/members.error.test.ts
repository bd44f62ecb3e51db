import { describe, expect, it } from "vitest";
import { api, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { errorOf, useFixture } from "../support/world.ts";
import {
  addMember,
  expectRefusedWithoutChange,
  grant,
  makeOrg,
  makeRepo,
  person,
  unique,
} from "./fixtures.ts";

const app = useFixture(startTestApp);

const membersOf = (org: string) =>
  app.sql("SELECT identity, role FROM org_members WHERE org = $1 ORDER BY identity", [org]);

describe("keeping an owner", () => {
  it("refuses to remove the last owner with 409 LAST_OWNER", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, person("bob"));
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(alice)).delete("/orgs/:org/members/:identity", { params: { org, identity: alice } }),
      409,
      "LAST_OWNER",
    );
  });

  it("refuses to demote the last owner with 409 LAST_OWNER", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(alice)).post("/orgs/:org/members/:identity", {
          params: { org, identity: alice },
          body: { role: "member" },
        }),
      409,
      "LAST_OWNER",
    );
    expect(await membersOf(org)).toEqual([{ identity: alice, role: "owner" }]);
  });

  it("refuses once the other owner has left", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob, "owner");
    expect(
      (await api(app.as(bob)).delete("/orgs/:org/members/:identity", { params: { org, identity: bob } }))
        .status,
    ).toBe(204);
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(alice)).delete("/orgs/:org/members/:identity", { params: { org, identity: alice } }),
      409,
      "LAST_OWNER",
    );
  });
});

describe("who may change members", () => {
  it("refuses a plain member adding someone with 403 FORBIDDEN", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(bob)).post("/orgs/:org/members/:identity", {
          params: { org, identity: person("carol") },
          body: { role: "member" },
        }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses a plain member promoting themselves with 403", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(bob)).post("/orgs/:org/members/:identity", {
          params: { org, identity: bob },
          body: { role: "owner" },
        }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses a plain member removing someone else with 403", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const carol = person("carol");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    await addMember(app, alice, org, carol);
    for (const target of [alice, carol]) {
      await expectRefusedWithoutChange(
        app,
        () => api(app.as(bob)).delete("/orgs/:org/members/:identity", { params: { org, identity: target } }),
        403,
        "FORBIDDEN",
      );
    }
  });

  it("refuses a repo-role holder with 403 and an outsider with 404 ORG_NOT_FOUND", async () => {
    const alice = person("alice");
    const holder = person("holder");
    const org = await makeOrg(app, alice);
    await grant(app, alice, await makeRepo(app, alice, org), holder, "admin");
    const add = (who: string) => () =>
      api(app.as(who)).post("/orgs/:org/members/:identity", {
        params: { org, identity: person("x") },
        body: { role: "member" },
      });
    await expectRefusedWithoutChange(app, add(holder), 403, "FORBIDDEN");
    await expectRefusedWithoutChange(app, add(person("outsider")), 404, "ORG_NOT_FOUND");
    await expectRefusedWithoutChange(
      app,
      () => app.as(person("outsider")).delete(`/orgs/${org}/members/${alice}`),
      404,
      "ORG_NOT_FOUND",
    );
  });
});

describe("bad member requests", () => {
  it("answers 404 MEMBER_NOT_FOUND when removing a non-member", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(alice)).delete("/orgs/:org/members/:identity", {
          params: { org, identity: person("nobody") },
        }),
      404,
      "MEMBER_NOT_FOUND",
    );
  });

  it.each([
    ["an unknown role", { role: "admin" }],
    ["a repo role", { role: "reader" }],
    ["an upper-case role", { role: "Owner" }],
    ["no role", {}],
  ])("answers 400 naming body.role for %s", async (_why, body) => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const res = await expectRefusedWithoutChange(
      app,
      () =>
        unchecked(app.as(alice)).post("/orgs/:org/members/:identity", {
          params: { org, identity: person("bob") },
          body,
        }),
      400,
      "VALIDATION_FAILED",
    );
    expect(errorOf(res).error).toContain("body.role");
  });

  it("answers 400 naming path.identity for an identity with a space", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const res = await expectRefusedWithoutChange(
      app,
      () => app.as(alice).post(`/orgs/${org}/members/bad%20identity`, { role: "member" }),
      400,
      "VALIDATION_FAILED",
    );
    expect(errorOf(res).error).toContain("path.identity");
  });

  it("answers 404 ORG_NOT_FOUND for a missing org", async () => {
    await expectRefusedWithoutChange(
      app,
      () =>
        app.as(person("alice")).post(`/orgs/${unique("nope")}/members/${person("b")}`, { role: "member" }),
      404,
      "ORG_NOT_FOUND",
    );
  });
});
