import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { errorOf, useFixture, world } from "../support/world.ts";
import {
  addMember,
  eventsOf,
  expectError,
  expectRefusedWithoutChange,
  makeOrg,
  person,
  unique,
} from "./fixtures.ts";

const app = useFixture(startTestApp);

/** An org with an owner, a member, a holder of a role on one of its repos, and an outsider. */
async function orgWithPeople() {
  const [member, roleHolder, outsider] = [person("member"), person("holder"), person("outsider")];
  const org = await world(app).org({ name: unique("org"), owner: person("owner"), members: [member] });
  const repo = await org.repo({ name: unique("repo") });
  await repo.grant(roleHolder, "reader");
  return { org: org.name, repo: repo.repo, owner: org.owner, member, roleHolder, outsider };
}

const names = (body: { orgs: { name: string }[] }) => body.orgs.map((o) => o.name);

describe("who sees an org", () => {
  it("lists it for its members and repo-role holders, not for others", async () => {
    const { org, owner, member, roleHolder, outsider } = await orgWithPeople();
    for (const who of [owner, member, roleHolder]) {
      expect(names(okBody(await api(app.as(who)).get("/orgs"))), who).toEqual([org]);
    }
    expect(okBody(await api(app.as(outsider)).get("/orgs"))).toEqual({ orgs: [] });
  });

  it("lists every org for a global admin", async () => {
    const a = (await orgWithPeople()).org;
    const b = await makeOrg(app, person("someone"));
    const all = names(okBody(await api(app.as(ADMIN)).get("/orgs")));
    expect(all).toEqual(expect.arrayContaining([a, b]));
    const [{ n }] = (await app.sql<{ n: number }>("SELECT count(*)::int AS n FROM orgs")) as [{ n: number }];
    expect(all).toHaveLength(n);
  });

  it("gets it for members, repo-role holders and global admins", async () => {
    const { org, owner, member, roleHolder } = await orgWithPeople();
    for (const who of [owner, member, roleHolder, ADMIN]) {
      expect((await api(app.as(who)).get("/orgs/:org", { params: { org } })).status, who).toBe(200);
    }
  });

  it("answers 404 ORG_NOT_FOUND to an outsider, exactly as for a missing org", async () => {
    const { org, outsider } = await orgWithPeople();
    const hidden = await api(app.as(outsider)).get("/orgs/:org", { params: { org } });
    const missing = await api(app.as(outsider)).get("/orgs/:org", {
      params: { org: "no-such-org-anywhere" },
    });
    expectError(hidden, 404, "ORG_NOT_FOUND");
    expect(errorOf(hidden).error.replace(org, "X")).toBe(
      errorOf(missing).error.replace("no-such-org-anywhere", "X"),
    );
    expectError(
      await api(app.as(outsider)).get("/orgs/:org/repos", { params: { org } }),
      404,
      "ORG_NOT_FOUND",
    );
    expectError(
      await api(app.as(outsider)).get("/orgs/:org/members", { params: { org } }),
      404,
      "ORG_NOT_FOUND",
    );
  });

  it("stops showing it to someone removed from it", async () => {
    const { org, owner, member } = await orgWithPeople();
    expect(
      (await api(app.as(owner)).delete("/orgs/:org/members/:identity", { params: { org, identity: member } }))
        .status,
    ).toBe(204);
    expect(okBody(await api(app.as(member)).get("/orgs"))).toEqual({ orgs: [] });
    expectError(await api(app.as(member)).get("/orgs/:org", { params: { org } }), 404, "ORG_NOT_FOUND");
  });
});

describe("who may delete an org", () => {
  it("refuses a member with 403 FORBIDDEN and changes nothing", async () => {
    const owner = person("owner");
    const member = person("member");
    const org = await makeOrg(app, owner);
    await addMember(app, owner, org, member);
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(member)).delete("/orgs/:org", { params: { org } }),
      403,
      "FORBIDDEN",
    );
    expect(await eventsOf(app, "com.svc.org.deleted", `/orgs/${org}`)).toHaveLength(0);
  });

  it("refuses a repo-role holder with 403 and an outsider with 404", async () => {
    const { org, roleHolder, outsider } = await orgWithPeople();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(roleHolder)).delete("/orgs/:org", { params: { org } }),
      403,
      "FORBIDDEN",
    );
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(outsider)).delete("/orgs/:org", { params: { org } }),
      404,
      "ORG_NOT_FOUND",
    );
  });
});

describe("signing in", () => {
  it("is required for every org endpoint", async () => {
    const org = await makeOrg(app, person("owner"));
    const calls = [
      api(app.anonymous).post("/orgs", { body: { name: "anon-org" } }),
      api(app.anonymous).get("/orgs"),
      api(app.anonymous).get("/orgs/:org", { params: { org } }),
      api(app.anonymous).delete("/orgs/:org", { params: { org } }),
      api(app.anonymous).get("/orgs/:org/repos", { params: { org } }),
      api(app.anonymous).get("/orgs/:org/members", { params: { org } }),
      api(app.anonymous).post("/orgs/:org/members/:identity", {
        params: { org, identity: "x@example.com" },
        body: { role: "member" },
      }),
      api(app.anonymous).get("/orgs/:org/invites", { params: { org } }),
    ];
    for (const res of await Promise.all(calls)) expectError(res, 401, "UNAUTHENTICATED");
    expect(await app.sql("SELECT 1 FROM orgs WHERE name = 'anon-org'")).toHaveLength(0);
  });

  it("refuses a token signed by an unknown key with 401", async () => {
    const token = await app.idp.tokenFromUnknownKey(person("mallory"));
    const res = await app.anonymous.raw("POST", "/orgs", {
      body: JSON.stringify({ name: "forged-org" }),
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
    expectError(res, 401, "UNAUTHENTICATED");
    expect(await app.sql("SELECT 1 FROM orgs WHERE name = 'forged-org'")).toHaveLength(0);
  });
});
