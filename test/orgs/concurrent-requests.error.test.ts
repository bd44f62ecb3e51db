import { describe, expect, it } from "vitest";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import type { Res } from "../support/client.ts";
import { useFixture } from "../support/world.ts";
import { addMember, eventsOf, makeOrg, person, unique } from "./fixtures.ts";

/**
 * Requests racing each other: the rules (one org per name, one membership per token, at least one
 * owner, no repo in a deleted org) must hold whichever request wins.
 */

const app = useFixture(startTestApp);

const statuses = (results: Res[]) => results.map((r) => r.status).sort();

describe("racing requests", () => {
  it("creating one org name five times at once makes one org, one owner and one event", async () => {
    const name = unique("race");
    const people = [1, 2, 3, 4, 5].map(() => person("racer"));
    const results = await Promise.all(people.map((p) => api(app.as(p)).post("/orgs", { body: { name } })));
    expect(statuses(results)).toEqual([201, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 201)!.body.created_by;
    expect(await app.sql("SELECT identity, role FROM org_members WHERE org = $1", [name])).toEqual([
      { identity: winner, role: "owner" },
    ]);
    expect(await eventsOf(app, "com.svc.org.created", `/orgs/${name}`)).toHaveLength(1);
  });

  it("accepting one invitation five times at once makes one membership", async () => {
    const owner = person("owner");
    const dana = person("dana");
    const org = await makeOrg(app, owner);
    const { token } = okBody(
      await api(app.as(owner)).post("/orgs/:org/invites", {
        params: { org },
        body: { email: dana, role: "member" },
      }),
    );
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map(() =>
        unchecked(app.as(dana)).post("/orgs/:org/invites/:token/accept", {
          params: { org, token },
          body: {},
        }),
      ),
    );
    expect(statuses(results)).toEqual([200, 409, 409, 409, 409]);
    expect(
      await app.sql("SELECT role FROM org_members WHERE org = $1 AND identity = $2", [org, dana]),
    ).toEqual([{ role: "member" }]);
  });

  it("accepting while the invitation is revoked: exactly one of them wins", async () => {
    const owner = person("owner");
    const dana = person("dana");
    const org = await makeOrg(app, owner);
    const { id, token } = okBody(
      await api(app.as(owner)).post("/orgs/:org/invites", {
        params: { org },
        body: { email: dana, role: "member" },
      }),
    );
    const [accept, revoke] = await Promise.all([
      unchecked(app.as(dana)).post("/orgs/:org/invites/:token/accept", { params: { org, token }, body: {} }),
      unchecked(app.as(owner)).delete("/orgs/:org/invites/:id", { params: { org, id } }),
    ]);
    const member = await app.sql("SELECT 1 FROM org_members WHERE org = $1 AND identity = $2", [org, dana]);
    if (accept.status === 200) {
      expect(revoke.status).toBe(409);
      expect(member).toHaveLength(1);
    } else {
      expect([accept.status, revoke.status]).toEqual([410, 204]);
      expect(member).toHaveLength(0);
    }
  });

  it("two owners leaving at once leave one owner behind", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob, "owner");
    const results = await Promise.all([
      api(app.as(alice)).delete("/orgs/:org/members/:identity", { params: { org, identity: alice } }),
      api(app.as(bob)).delete("/orgs/:org/members/:identity", { params: { org, identity: bob } }),
    ]);
    expect(statuses(results)).toEqual([204, 409]);
    expect(await app.sql("SELECT 1 FROM org_members WHERE org = $1 AND role = 'owner'", [org])).toHaveLength(
      1,
    );
  });

  it("two owners stepping down to member at once leave one owner behind", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await addMember(app, alice, org, bob, "owner");
    const results = await Promise.all(
      [alice, bob].map((who) =>
        api(app.as(who)).post("/orgs/:org/members/:identity", {
          params: { org, identity: who },
          body: { role: "member" },
        }),
      ),
    );
    expect(statuses(results)).toEqual([200, 409]);
    expect(await app.sql("SELECT 1 FROM org_members WHERE org = $1 AND role = 'owner'", [org])).toHaveLength(
      1,
    );
  });

  it("creating one repo name three times at once makes one repo with one main and one admin", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const name = `${org}/docs`;
    const results = await Promise.all(
      [1, 2, 3].map(() => api(app.as(alice)).post("/repos", { body: { owner: org, name } })),
    );
    expect(statuses(results)).toEqual([201, 409, 409]);
    const rows = await app.sql(
      `SELECT (SELECT count(*)::int FROM branches b WHERE b.repo_id = r.id) AS branches,
              (SELECT count(*)::int FROM repo_roles rr WHERE rr.repo_id = r.id) AS roles
       FROM repos r WHERE r.name = $1`,
      [name],
    );
    expect(rows).toEqual([{ branches: 1, roles: 1 }]);
    expect(await eventsOf(app, "com.svc.repo.created", `/repos/${name}`)).toHaveLength(1);
  });

  it("creating a repo while its org is deleted: either the repo or the deletion is refused", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const [create, remove] = await Promise.all([
      api(app.as(alice)).post("/repos", { body: { owner: org, name: `${org}/docs` } }),
      api(app.as(alice)).delete("/orgs/:org", { params: { org } }),
    ]);
    const orgs = await app.sql("SELECT 1 FROM orgs WHERE name = $1", [org]);
    const repos = await app.sql("SELECT 1 FROM repos WHERE owner = $1", [org]);
    if (create.status === 201) {
      expect(remove.status).toBe(409);
      expect([orgs.length, repos.length]).toEqual([1, 1]);
    } else {
      expect([create.status, remove.status]).toEqual([404, 204]);
      expect([orgs.length, repos.length]).toEqual([0, 0]);
    }
  });
});
