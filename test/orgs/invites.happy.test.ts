import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { expectOk, expectStatus, useFixture } from "../support/world.ts";
import { makeOrg, person } from "./fixtures.ts";

const app = useFixture(startTestApp);

const DAY = 24 * 60 * 60 * 1000;

async function invite(owner: string, org: string, email: string, role: "member" | "owner" = "member") {
  const res = await api(app.as(owner)).post("/orgs/:org/invites", { params: { org }, body: { email, role } });
  expectOk(res, 201);
  return res.body as { id: string; token: string; email: string; role: string };
}

describe("creating an invitation", () => {
  it("answers 201 with id, org, email, role, expires_at and a token", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const email = person("dana");
    const res = await api(app.as(alice)).post("/orgs/:org/invites", {
      params: { org },
      body: { email, role: "owner" },
    });
    expectOk(res, 201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      org,
      email,
      role: "owner",
      created_at: expect.any(String),
      created_by: alice,
      expires_at: expect.any(String),
      token: expect.stringMatching(/^qi_[A-Za-z0-9_-]{43}$/),
    });
    const lifetime = Date.parse(res.body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(7 * DAY - 60_000);
    expect(lifetime).toBeLessThanOrEqual(7 * DAY);
  });

  it("gives every invitation its own token", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const email = person("dana");
    const a = await invite(alice, org, email);
    const b = await invite(alice, org, email);
    expect(a.token).not.toBe(b.token);
    expect(a.id).not.toBe(b.id);
  });
});

describe("listing invitations", () => {
  it("shows pending invitations without their tokens", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const a = await invite(alice, org, person("dana"));
    const b = await invite(alice, org, person("erin"), "owner");
    const res = await api(app.as(alice)).get("/orgs/:org/invites", { params: { org } });
    expectOk(res, 200);
    expect(res.body.invites.map((i: { id: string }) => i.id)).toEqual([a.id, b.id]);
    for (const listed of res.body.invites) expect(listed).not.toHaveProperty("token");
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(a.token);
    expect(text).not.toContain(b.token);
  });

  it("drops accepted, revoked and expired invitations", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const dana = person("dana");
    const accepted = await invite(alice, org, dana);
    const revoked = await invite(alice, org, person("erin"));
    const expired = await invite(alice, org, person("fay"));
    const pending = await invite(alice, org, person("gus"));
    expect(
      (
        await api(app.as(dana)).post("/orgs/:org/invites/:token/accept", {
          params: { org, token: accepted.token },
          body: {},
        })
      ).status,
    ).toBe(200);
    expect(
      (await api(app.as(alice)).delete("/orgs/:org/invites/:id", { params: { org, id: revoked.id } })).status,
    ).toBe(204);
    await app.sql("UPDATE org_invites SET expires_at = now() - interval '1 minute' WHERE id = $1", [
      expired.id,
    ]);
    const res = await api(app.as(alice)).get("/orgs/:org/invites", { params: { org } });
    expectOk(res, 200);
    expect(res.body.invites.map((i: { id: string }) => i.id)).toEqual([pending.id]);
  });
});

describe("accepting an invitation", () => {
  it("makes the invited email a member with the invited role (200, member record)", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const dana = person("dana");
    const { token } = await invite(alice, org, dana, "owner");
    const res = await api(app.as(dana)).post("/orgs/:org/invites/:token/accept", {
      params: { org, token },
      body: {},
    });
    expectOk(res, 200);
    expect(res.body).toEqual({
      org,
      identity: dana,
      role: "owner",
      added_at: expect.any(String),
      added_by: alice,
    });
    const members = okBody(await api(app.as(dana)).get("/orgs/:org/members", { params: { org } })).members;
    expect(members).toContainEqual(expect.objectContaining({ identity: dana, role: "owner" }));
  });

  it("marks the invitation accepted, by whom", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const dana = person("dana");
    const { id, token } = await invite(alice, org, dana);
    await api(app.as(dana)).post("/orgs/:org/invites/:token/accept", { params: { org, token }, body: {} });
    const [row] = await app.sql("SELECT accepted_at, accepted_by FROM org_invites WHERE id = $1", [id]);
    expect(row).toEqual({ accepted_at: expect.any(Date), accepted_by: dana });
  });

  it("matches the email case-insensitively", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const dana = person("dana");
    const { token } = await invite(alice, org, dana.toUpperCase());
    const res = await api(app.as(dana)).post("/orgs/:org/invites/:token/accept", {
      params: { org, token },
      body: {},
    });
    expectOk(res, 200);
    expect(res.body).toMatchObject({ identity: dana, role: "member" });
  });

  it("matches an upper-case sign-in against a lower-case invitation", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const dana = person("dana");
    const { token } = await invite(alice, org, dana);
    const res = await app.as(dana.toUpperCase()).post(`/orgs/${org}/invites/${token}/accept`);
    expect(expectStatus(res, 200)).toMatchObject({ role: "member" });
  });

  it("keeps an existing owner an owner when they accept a member invitation", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    expect(
      (
        await api(app.as(alice)).post("/orgs/:org/members/:identity", {
          params: { org, identity: bob },
          body: { role: "owner" },
        })
      ).status,
    ).toBe(201);
    const { token } = await invite(alice, org, bob, "member");
    const res = await api(app.as(bob)).post("/orgs/:org/invites/:token/accept", {
      params: { org, token },
      body: {},
    });
    expectOk(res, 200);
    expect(res.body.role).toBe("owner");
    const [row] = await app.sql("SELECT role FROM org_members WHERE org = $1 AND identity = $2", [org, bob]);
    expect(row).toEqual({ role: "owner" });
  });

  it("promotes an existing member who accepts an owner invitation", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const org = await makeOrg(app, alice);
    await api(app.as(alice)).post("/orgs/:org/members/:identity", {
      params: { org, identity: bob },
      body: { role: "member" },
    });
    const { token } = await invite(alice, org, bob, "owner");
    expect(
      okBody(
        await api(app.as(bob)).post("/orgs/:org/invites/:token/accept", { params: { org, token }, body: {} }),
      ).role,
    ).toBe("owner");
  });

  it("works for invitations created by a global admin", async () => {
    const org = await makeOrg(app, person("alice"));
    const dana = person("dana");
    const { token } = await invite(ADMIN, org, dana);
    const res = await api(app.as(dana)).post("/orgs/:org/invites/:token/accept", {
      params: { org, token },
      body: {},
    });
    expectOk(res, 200);
    expect(res.body.added_by).toBe(ADMIN);
  });
});

describe("revoking an invitation", () => {
  it("answers 204 and marks it revoked, by whom", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const { id } = await invite(alice, org, person("dana"));
    const res = await api(app.as(alice)).delete("/orgs/:org/invites/:id", { params: { org, id } });
    expectOk(res, 204);
    const [row] = await app.sql("SELECT revoked_at, revoked_by FROM org_invites WHERE id = $1", [id]);
    expect(row).toEqual({ revoked_at: expect.any(Date), revoked_by: alice });
  });
});
