import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { expectOneEvent, makeOrg, makeRepo, person, unique } from "./fixtures.ts";

const app = useFixture(startTestApp);

describe("creating an org", () => {
  it("answers 201 with name, created_at and created_by", async () => {
    const alice = person("alice");
    const name = unique("acme");
    const res = await api(app.as(alice)).post("/orgs", { body: { name } });
    expectOk(res, 201);
    expect(res.body).toEqual({ name, created_at: expect.any(String), created_by: alice });
    expect(Math.abs(Date.parse(res.body.created_at) - Date.now())).toBeLessThan(60_000);
  });

  it("makes the creator its owner", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const res = await api(app.as(alice)).get("/orgs/:org/members", { params: { org } });
    expectOk(res, 200);
    expect(res.body.members).toEqual([
      { org, identity: alice, role: "owner", added_at: expect.any(String), added_by: alice },
    ]);
  });

  it("accepts names using letters, digits, '.', '_' and '-' up to 63 characters", async () => {
    const alice = person("alice");
    for (const name of ["A1.b_c-d", "9lives", "x".repeat(63)]) {
      expect((await api(app.as(alice)).post("/orgs", { body: { name } })).status).toBe(201);
      expect(okBody(await api(app.as(alice)).get("/orgs/:org", { params: { org: name } })).name).toBe(name);
    }
  });

  it("records com.svc.org.created once, with source /orgs/<org>", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const event = await expectOneEvent(app, "com.svc.org.created", `/orgs/${org}`, {
      org,
      created_by: alice,
    });
    expect(event.repo).toBeNull();
  });
});

describe("reading orgs", () => {
  it("gets an org by name for its owner", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const res = await api(app.as(alice)).get("/orgs/:org", { params: { org } });
    expectOk(res, 200);
    expect(res.body).toEqual({ name: org, created_at: expect.any(String), created_by: alice });
  });

  it("lists the caller's orgs in a {orgs} body", async () => {
    const alice = person("alice");
    const a = await makeOrg(app, alice);
    const b = await makeOrg(app, alice);
    const res = await api(app.as(alice)).get("/orgs");
    expectOk(res, 200);
    expect(res.body.orgs.map((o: { name: string }) => o.name)).toEqual([a, b].sort());
    expect(res.body.orgs[0]).toEqual({
      name: expect.any(String),
      created_at: expect.any(String),
      created_by: alice,
    });
  });

  it("lists an empty org's repos as an empty list", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    expect(okBody(await api(app.as(alice)).get("/orgs/:org/repos", { params: { org } }))).toEqual({
      repos: [],
    });
  });
});

describe("deleting an org", () => {
  it("answers 204, then the org, its members and invitations are gone", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    await api(app.as(alice)).post("/orgs/:org/members/:identity", {
      params: { org, identity: person("bob") },
      body: { role: "member" },
    });
    await api(app.as(alice)).post("/orgs/:org/invites", {
      params: { org },
      body: { email: person("carol"), role: "member" },
    });
    const res = await api(app.as(alice)).delete("/orgs/:org", { params: { org } });
    expectOk(res, 204);
    expect(res.body).toBe("");
    expect((await api(app.as(alice)).get("/orgs/:org", { params: { org } })).status).toBe(404);
    for (const table of ["orgs", "org_members", "org_invites"]) {
      const column = table === "orgs" ? "name" : "org";
      const rows = await app.sql(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [org]);
      expect(rows, table).toHaveLength(0);
    }
  });

  it("records com.svc.org.deleted once, with deleted_by", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    expect((await api(app.as(alice)).delete("/orgs/:org", { params: { org } })).status).toBe(204);
    await expectOneEvent(app, "com.svc.org.deleted", `/orgs/${org}`, { org, deleted_by: alice });
  });

  it("is allowed once its last repo is deleted", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const repo = await makeRepo(app, alice, org);
    expect((await api(app.as(alice)).delete("/orgs/:org", { params: { org } })).status).toBe(409);
    expect((await api(app.as(alice)).delete("/repos/:repo*", { params: { repo } })).status).toBe(204);
    expect((await api(app.as(alice)).delete("/orgs/:org", { params: { org } })).status).toBe(204);
  });

  it("lets a global admin delete an org they are not a member of", async () => {
    const org = await makeOrg(app, person("alice"));
    expect((await api(app.as(ADMIN)).delete("/orgs/:org", { params: { org } })).status).toBe(204);
    await expectOneEvent(app, "com.svc.org.deleted", `/orgs/${org}`, { org, deleted_by: ADMIN });
  });

  it("frees the name for a new org", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    expect((await api(app.as(alice)).delete("/orgs/:org", { params: { org } })).status).toBe(204);
    const bob = person("bob");
    const again = await api(app.as(bob)).post("/orgs", { body: { name: org } });
    expectOk(again, 201);
    expect(again.body.created_by).toBe(bob);
  });
});
