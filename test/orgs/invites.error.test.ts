import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { api, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { errorOf, expectOk, useFixture } from "../support/world.ts";
import { expectError, expectRefusedWithoutChange, makeOrg, person } from "./fixtures.ts";

const app = useFixture(startTestApp);

/** An org owned by a fresh owner, with a pending member invitation for a fresh invitee. */
async function pendingInvite(role = "member") {
  const owner = person("owner");
  const invitee = person("invitee");
  const org = await makeOrg(app, owner);
  const res = await unchecked(app.as(owner)).post("/orgs/:org/invites", {
    params: { org },
    body: { email: invitee, role },
  });
  expectOk(res, 201);
  const { id, token } = res.body as { id: string; token: string };
  const accept = (who = invitee, inOrg = org) =>
    api(app.as(who)).post("/orgs/:org/invites/:token/accept", { params: { org: inOrg, token }, body: {} });
  const revoke = () => api(app.as(owner)).delete("/orgs/:org/invites/:id", { params: { org, id } });
  return { owner, invitee, org, id, token, accept, revoke };
}

const isMember = async (org: string, identity: string) =>
  (await app.sql("SELECT 1 FROM org_members WHERE org = $1 AND identity = $2", [org, identity])).length > 0;

describe("accepting an invitation that cannot be accepted", () => {
  it("refuses another email with 403 INVITE_EMAIL_MISMATCH and leaves it pending", async () => {
    const inv = await pendingInvite();
    const mallory = person("mallory");
    await expectRefusedWithoutChange(app, () => inv.accept(mallory), 403, "INVITE_EMAIL_MISMATCH");
    expect(await isMember(inv.org, mallory)).toBe(false);
    expect((await inv.accept()).status).toBe(200);
  });

  it("refuses a second accept with 409 INVITE_USED", async () => {
    const inv = await pendingInvite();
    expect((await inv.accept()).status).toBe(200);
    await expectRefusedWithoutChange(app, () => inv.accept(), 409, "INVITE_USED");
  });

  it("refuses a second accept even after the member has left", async () => {
    const inv = await pendingInvite();
    expect((await inv.accept()).status).toBe(200);
    expect(
      (
        await api(app.as(inv.invitee)).delete("/orgs/:org/members/:identity", {
          params: { org: inv.org, identity: inv.invitee },
        })
      ).status,
    ).toBe(204);
    await expectRefusedWithoutChange(app, () => inv.accept(), 409, "INVITE_USED");
    expect(await isMember(inv.org, inv.invitee)).toBe(false);
  });

  it("refuses a revoked invitation with 410 INVITE_REVOKED", async () => {
    const inv = await pendingInvite();
    expect((await inv.revoke()).status).toBe(204);
    await expectRefusedWithoutChange(app, () => inv.accept(), 410, "INVITE_REVOKED");
    expect(await isMember(inv.org, inv.invitee)).toBe(false);
  });

  it("refuses an expired invitation with 410 INVITE_EXPIRED", async () => {
    const inv = await pendingInvite();
    await app.sql("UPDATE org_invites SET expires_at = now() - interval '1 second' WHERE id = $1", [inv.id]);
    await expectRefusedWithoutChange(app, () => inv.accept(), 410, "INVITE_EXPIRED");
    expect(await isMember(inv.org, inv.invitee)).toBe(false);
  });

  it("answers 404 INVITE_NOT_FOUND for the token under another org's path, and it stays usable", async () => {
    const inv = await pendingInvite();
    const other = await makeOrg(app, inv.owner);
    await expectRefusedWithoutChange(app, () => inv.accept(inv.invitee, other), 404, "INVITE_NOT_FOUND");
    expect(await isMember(other, inv.invitee)).toBe(false);
    expect((await inv.accept()).status).toBe(200);
  });

  it("answers 404 INVITE_NOT_FOUND for a well-formed token nobody issued", async () => {
    const inv = await pendingInvite();
    const forged = randomBytes(32).toString("base64url");
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(inv.invitee)).post("/orgs/:org/invites/:token/accept", {
          params: { org: inv.org, token: forged },
          body: {},
        }),
      404,
      "INVITE_NOT_FOUND",
    );
  });

  it("answers 400 for a malformed token", async () => {
    const inv = await pendingInvite();
    for (const bad of ["short", "has.dots.in.it.and.is.long.enough.for.the.length.rule"]) {
      const res = await api(app.as(inv.invitee)).post("/orgs/:org/invites/:token/accept", {
        params: { org: inv.org, token: bad },
        body: {},
      });
      expectError(res, 400, "VALIDATION_FAILED");
      expect(errorOf(res).error).toContain("path.token");
    }
  });
});

describe("revoking an invitation that cannot be revoked", () => {
  it("answers 410 INVITE_REVOKED the second time", async () => {
    const inv = await pendingInvite();
    expect((await inv.revoke()).status).toBe(204);
    await expectRefusedWithoutChange(app, inv.revoke, 410, "INVITE_REVOKED");
  });

  it("answers 409 INVITE_USED for an accepted invitation, and the membership stays", async () => {
    const inv = await pendingInvite();
    expect((await inv.accept()).status).toBe(200);
    await expectRefusedWithoutChange(app, inv.revoke, 409, "INVITE_USED");
    expect(await isMember(inv.org, inv.invitee)).toBe(true);
  });

  it("answers 410 INVITE_EXPIRED for an expired invitation", async () => {
    const inv = await pendingInvite();
    await app.sql("UPDATE org_invites SET expires_at = now() - interval '1 second' WHERE id = $1", [inv.id]);
    await expectRefusedWithoutChange(app, inv.revoke, 410, "INVITE_EXPIRED");
  });

  it("answers 400 naming path.id for a malformed id", async () => {
    const inv = await pendingInvite();
    const res = await api(app.as(inv.owner)).delete("/orgs/:org/invites/:id", {
      params: { org: inv.org, id: "not-a-uuid" },
    });
    expectError(res, 400, "VALIDATION_FAILED");
    expect(errorOf(res).error).toContain("path.id");
  });

  it("answers 404 INVITE_NOT_FOUND for an unknown id, or one from another org", async () => {
    const inv = await pendingInvite();
    const other = await makeOrg(app, inv.owner);
    for (const [org, id] of [
      [inv.org, randomUUID()],
      [other, inv.id],
    ] as const) {
      await expectRefusedWithoutChange(
        app,
        () => api(app.as(inv.owner)).delete("/orgs/:org/invites/:id", { params: { org, id } }),
        404,
        "INVITE_NOT_FOUND",
      );
    }
    expect((await inv.accept()).status).toBe(200);
  });
});

describe("creating an invitation from a bad request", () => {
  it.each([
    ["a malformed email", { email: "not-an-email", role: "member" }, "body.email"],
    ["no email", { role: "member" }, "body.email"],
    ["an unknown role", { email: "x@example.com", role: "admin" }, "body.role"],
    ["no role", { email: "x@example.com" }, "body.role"],
  ])("answers 400 naming the field for %s", async (_why, body, field) => {
    const owner = person("owner");
    const org = await makeOrg(app, owner);
    const res = await expectRefusedWithoutChange(
      app,
      () => unchecked(app.as(owner)).post("/orgs/:org/invites", { params: { org }, body }),
      400,
      "VALIDATION_FAILED",
    );
    expect(errorOf(res).error).toContain(field);
  });
});
