import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { addMember, makeOrg, makeRepo, person, tableCounts } from "./fixtures.ts";

const app = useFixture(startTestApp);

const roleOf = async (org: string, identity: string) =>
  (
    await app.sql<{ role: string }>("SELECT role FROM org_members WHERE org = $1 AND identity = $2", [
      org,
      identity,
    ])
  )[0]?.role;

describe("adding a member", () => {
  it("answers 201 with the member record", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    const res = await api(app.as(alice)).post("/orgs/:org/members/:identity", {
      params: { org, identity: bob },
      body: { role: "member" },
    });
    expectOk(res, 201);
    expect(res.body).toEqual({
      org,
      identity: bob,
      role: "member",
      added_at: expect.any(String),
      added_by: alice,
    });
    expect(await roleOf(org, bob)).toBe("member");
  });

  it("lists members sorted by identity, with their roles", async () => {
    const alice = person("zz-alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob, "owner");
    const res = await api(app.as(bob)).get("/orgs/:org/members", { params: { org } });
    expectOk(res, 200);
    expect(res.body.members.map((m: { identity: string; role: string }) => [m.identity, m.role])).toEqual([
      [bob, "owner"],
      [alice, "owner"],
    ]);
  });

  it("lets a plain member list the members", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    expect(
      okBody(await api(app.as(bob)).get("/orgs/:org/members", { params: { org } })).members,
    ).toHaveLength(2);
  });

  it("lets a global admin add a member to any org", async () => {
    const org = await makeOrg(app, person("alice"));
    const bob = person("bob");
    const res = await api(app.as(ADMIN)).post("/orgs/:org/members/:identity", {
      params: { org, identity: bob },
      body: { role: "owner" },
    });
    expectOk(res, 201);
    expect(res.body.added_by).toBe(ADMIN);
  });

  it("gives a member read access to the org's repos", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    const repo = await makeRepo(app, alice, org);
    expect((await api(app.as(bob)).get("/repos/:repo*", { params: { repo } })).status).toBe(404);
    await addMember(app, alice, org, bob);
    expect((await api(app.as(bob)).get("/repos/:repo*", { params: { repo } })).status).toBe(200);
  });

  it("records no event (members are not in the event list)", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const before = (await tableCounts(app)).events;
    await addMember(app, alice, org, person("bob"));
    expect((await tableCounts(app)).events).toBe(before);
  });
});

describe("changing a member's role", () => {
  it("answers 200 with the changed record when the identity is already a member", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    const res = await api(app.as(alice)).post("/orgs/:org/members/:identity", {
      params: { org, identity: bob },
      body: { role: "owner" },
    });
    expectOk(res, 200);
    expect(res.body).toMatchObject({ org, identity: bob, role: "owner" });
    expect(await roleOf(org, bob)).toBe("owner");
  });

  it("lets an owner step down while another owner remains", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob, "owner");
    const res = await api(app.as(alice)).post("/orgs/:org/members/:identity", {
      params: { org, identity: alice },
      body: { role: "member" },
    });
    expectOk(res, 200);
    expect(await roleOf(org, alice)).toBe("member");
  });

  it("is idempotent: setting the same role again answers 200 and changes nothing", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    const res = await api(app.as(alice)).post("/orgs/:org/members/:identity", {
      params: { org, identity: bob },
      body: { role: "member" },
    });
    expectOk(res, 200);
    expect(await app.sql("SELECT 1 FROM org_members WHERE org = $1", [org])).toHaveLength(2);
  });
});

describe("removing a member", () => {
  it("answers 204 and the member is gone from the list", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    const res = await api(app.as(alice)).delete("/orgs/:org/members/:identity", {
      params: { org, identity: bob },
    });
    expectOk(res, 204);
    const members = okBody(await api(app.as(alice)).get("/orgs/:org/members", { params: { org } })).members;
    expect(members.map((m: { identity: string }) => m.identity)).toEqual([alice]);
  });

  it("lets a member leave on their own", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob);
    expect(
      (await api(app.as(bob)).delete("/orgs/:org/members/:identity", { params: { org, identity: bob } }))
        .status,
    ).toBe(204);
    expect(await roleOf(org, bob)).toBeUndefined();
  });

  it("lets an owner leave while another owner remains", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob, "owner");
    expect(
      (await api(app.as(alice)).delete("/orgs/:org/members/:identity", { params: { org, identity: alice } }))
        .status,
    ).toBe(204);
    expect(await roleOf(org, bob)).toBe("owner");
  });
});
