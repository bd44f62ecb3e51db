import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { errorOf, useFixture } from "../support/world.ts";
import {
  eventsOf,
  expectError,
  expectRefusedWithoutChange,
  makeOrg,
  makeRepo,
  person,
  unique,
} from "./fixtures.ts";

const app = useFixture(startTestApp);

const NAME_CODES = ["INVALID_NAME", "VALIDATION_FAILED"];

describe("creating an org that cannot be created", () => {
  it("refuses a taken name with 409 ORG_EXISTS, keeping the first owner and recording no event", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const bob = person("bob");
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(bob)).post("/orgs", { body: { name: org } }),
      409,
      "ORG_EXISTS",
    );
    const members = await app.sql("SELECT identity, role FROM org_members WHERE org = $1", [org]);
    expect(members).toEqual([{ identity: alice, role: "owner" }]);
    expect(await eventsOf(app, "com.svc.org.created", `/orgs/${org}`)).toHaveLength(1);
  });

  it.each([
    ["a slash", "ac/me"],
    ["a space", "ac me"],
    ["a leading '-'", "-acme"],
    ["a leading '.'", ".acme"],
    ["a leading '_'", "_acme"],
    ["'..'", ".."],
    ["a non-ASCII letter", "acmé"],
    ["a colon", "ac:me"],
    ["nothing", ""],
    ["64 characters", "x".repeat(64)],
  ])("refuses a name with %s with 400 naming body.name", async (_why, name) => {
    const res = await expectRefusedWithoutChange(
      app,
      () => app.as(person("alice")).post("/orgs", { name }),
      400,
      NAME_CODES,
    );
    expect(errorOf(res).error).toContain("body.name");
  });

  it("refuses a missing or non-string name with 400 naming body.name", async () => {
    for (const body of [{}, { name: 42 }, { name: null }]) {
      const res = await app.as(person("alice")).post("/orgs", body);
      expectError(res, 400, NAME_CODES);
      expect(errorOf(res).error).toContain("body.name");
    }
  });

  it("refuses a body that is not JSON with 400 MALFORMED_JSON", async () => {
    const res = await app.as(person("alice")).raw("POST", "/orgs", {
      body: "{name:",
      headers: { "content-type": "application/json" },
    });
    expectError(res, 400, "MALFORMED_JSON");
  });
});

describe("reading an org that is not there", () => {
  it("answers 404 ORG_NOT_FOUND for a missing org", async () => {
    expectError(await app.as(person("alice")).get(`/orgs/${unique("nope")}`), 404, "ORG_NOT_FOUND");
  });

  it("answers 404 ORG_NOT_FOUND for the repos and members of a missing org", async () => {
    const missing = unique("nope");
    const alice = app.as(person("alice"));
    expectError(await api(alice).get("/orgs/:org/repos", { params: { org: missing } }), 404, "ORG_NOT_FOUND");
    expectError(
      await api(alice).get("/orgs/:org/members", { params: { org: missing } }),
      404,
      "ORG_NOT_FOUND",
    );
  });

  it("answers 400 naming path.org for an invalid name in the path", async () => {
    const res = await app.as(person("alice")).get("/orgs/-bad");
    expectError(res, 400, NAME_CODES);
    expect(errorOf(res).error).toContain("path.org");
  });
});

describe("deleting an org that cannot be deleted", () => {
  it("refuses while it has repos with 409 ORG_NOT_EMPTY and changes nothing", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const repo = await makeRepo(app, alice, org);
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(alice)).delete("/orgs/:org", { params: { org } }),
      409,
      "ORG_NOT_EMPTY",
    );
    expect((await api(app.as(alice)).get("/orgs/:org", { params: { org } })).status).toBe(200);
    expect((await api(app.as(alice)).get("/repos/:repo*", { params: { repo } })).status).toBe(200);
    expect(await eventsOf(app, "com.svc.org.deleted", `/orgs/${org}`)).toHaveLength(0);
  });

  it("answers 404 ORG_NOT_FOUND for a missing org", async () => {
    await expectRefusedWithoutChange(
      app,
      () => app.as(person("alice")).delete(`/orgs/${unique("nope")}`),
      404,
      "ORG_NOT_FOUND",
    );
  });

  it("answers 404 the second time", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    expect((await api(app.as(alice)).delete("/orgs/:org", { params: { org } })).status).toBe(204);
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(alice)).delete("/orgs/:org", { params: { org } }),
      404,
      "ORG_NOT_FOUND",
    );
    expect(await eventsOf(app, "com.svc.org.deleted", `/orgs/${org}`)).toHaveLength(1);
  });
});

describe("methods an org path does not have", () => {
  it("answers 405 with an Allow header", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const res = await app.as(alice).put(`/orgs/${org}`, { name: org });
    expectError(res, 405, "METHOD_NOT_ALLOWED");
    expect(res.headers.get("allow")).toBe("DELETE, GET");
  });
});
