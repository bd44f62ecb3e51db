import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, useFixture, world } from "../support/world.ts";
import { expectError, expectRefusedWithoutChange, grant, makeRepo, person, unique } from "./fixtures.ts";

const app = useFixture(startTestApp);

async function orgWithInvite() {
  const [member, invitee] = [person("member"), person("invitee")];
  const org = await world(app).org({ name: unique("org"), owner: person("owner"), members: [member] });
  const res = await api(org.client).post("/orgs/:org/invites", {
    params: { org: org.name },
    body: { email: invitee, role: "owner" },
  });
  expectOk(res, 201);
  const { id, token } = res.body as { id: string; token: string };
  return { owner: org.owner, member, invitee, org: org.name, id, token };
}

describe("storing invitation tokens", () => {
  it("keeps only the token's SHA-256: the token text appears nowhere in org_invites", async () => {
    const { id, token } = await orgWithInvite();
    const [row] = await app.sql<{ hash: string }>(
      "SELECT encode(token_sha256, 'hex') AS hash FROM org_invites WHERE id = $1",
      [id],
    );
    expect(row!.hash).toBe(createHash("sha256").update(token).digest("hex"));
    const dump = await app.sql<{ text: string }>("SELECT i::text AS text FROM org_invites i");
    const hexOfToken = Buffer.from(token).toString("hex");
    for (const { text } of dump) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(hexOfToken);
    }
  });

  it("never shows the token again: not in the list, not in the accept answer", async () => {
    const { owner, invitee, org, token } = await orgWithInvite();
    const list = await api(app.as(owner)).get("/orgs/:org/invites", { params: { org } });
    expect(JSON.stringify(list.body)).not.toContain(token);
    const accepted = await api(app.as(invitee)).post("/orgs/:org/invites/:token/accept", {
      params: { org, token },
      body: {},
    });
    expectOk(accepted, 200);
    expect(JSON.stringify(accepted.body)).not.toContain(token);
  });
});

describe("who may manage invitations", () => {
  it("refuses a plain member creating, listing or revoking with 403 FORBIDDEN", async () => {
    const { member, org, id } = await orgWithInvite();
    const as = app.as(member);
    await expectRefusedWithoutChange(
      app,
      () =>
        api(as).post("/orgs/:org/invites", { params: { org }, body: { email: person("x"), role: "member" } }),
      403,
      "FORBIDDEN",
    );
    expectError(await api(as).get("/orgs/:org/invites", { params: { org } }), 403, "FORBIDDEN");
    await expectRefusedWithoutChange(
      app,
      () => api(as).delete("/orgs/:org/invites/:id", { params: { org, id } }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses a repo-role holder with 403 and an outsider with 404 ORG_NOT_FOUND", async () => {
    const { owner, org, id } = await orgWithInvite();
    const holder = person("holder");
    await grant(app, owner, await makeRepo(app, owner, org), holder, "admin");
    const create = (who: string) => () =>
      api(app.as(who)).post("/orgs/:org/invites", {
        params: { org },
        body: { email: `${who}`, role: "owner" },
      });
    await expectRefusedWithoutChange(app, create(holder), 403, "FORBIDDEN");
    const outsider = person("outsider");
    await expectRefusedWithoutChange(app, create(outsider), 404, "ORG_NOT_FOUND");
    expectError(
      await api(app.as(outsider)).get("/orgs/:org/invites", { params: { org } }),
      404,
      "ORG_NOT_FOUND",
    );
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(outsider)).delete("/orgs/:org/invites/:id", { params: { org, id } }),
      404,
      "ORG_NOT_FOUND",
    );
  });

  it("lets the invitee, an outsider until then, accept without seeing the org first", async () => {
    const { invitee, org, token } = await orgWithInvite();
    expectError(await api(app.as(invitee)).get("/orgs/:org", { params: { org } }), 404, "ORG_NOT_FOUND");
    expect(
      (
        await api(app.as(invitee)).post("/orgs/:org/invites/:token/accept", {
          params: { org, token },
          body: {},
        })
      ).status,
    ).toBe(200);
    expect((await api(app.as(invitee)).get("/orgs/:org", { params: { org } })).status).toBe(200);
  });

  it("does not let the owner who sent it accept it for the invitee (403 INVITE_EMAIL_MISMATCH)", async () => {
    const { owner, invitee, org, token } = await orgWithInvite();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(owner)).post("/orgs/:org/invites/:token/accept", { params: { org, token }, body: {} }),
      403,
      "INVITE_EMAIL_MISMATCH",
    );
    expect(
      (
        await api(app.as(invitee)).post("/orgs/:org/invites/:token/accept", {
          params: { org, token },
          body: {},
        })
      ).status,
    ).toBe(200);
  });

  it("needs a signed-in caller to accept (401) and leaves the invitation pending", async () => {
    const { invitee, org, token } = await orgWithInvite();
    await expectRefusedWithoutChange(
      app,
      () => api(app.anonymous).post("/orgs/:org/invites/:token/accept", { params: { org, token }, body: {} }),
      401,
      "UNAUTHENTICATED",
    );
    expect(
      (
        await api(app.as(invitee)).post("/orgs/:org/invites/:token/accept", {
          params: { org, token },
          body: {},
        })
      ).status,
    ).toBe(200);
  });
});
