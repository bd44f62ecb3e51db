import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, expectStatus, useFixture } from "../support/world.ts";
import { expectRefusedWithoutChange, makeOrg, makeRepo, person, unique } from "./fixtures.ts";

const app = useFixture(startTestApp);

describe("letter case", () => {
  it("treats identities as emails: the same address in any case is one person", async () => {
    const dana = person("dana");
    const org = await makeOrg(app, dana.toUpperCase());
    const members = await api(app.as(dana)).get("/orgs/:org/members", { params: { org } });
    expectOk(members, 200);
    expect(members.body.members).toEqual([expect.objectContaining({ identity: dana, role: "owner" })]);
    const repo = await makeRepo(app, dana, org);
    const granted = await app
      .as(dana)
      .put(`/repos/${repo}/-/roles/${encodeURIComponent(`Eve.${dana}`.toUpperCase())}`, { role: "reader" });
    expect(expectStatus(granted, 200)).toMatchObject({ identity: `eve.${dana}` });
    expect((await api(app.as(`eve.${dana}`)).get("/repos/:repo*", { params: { repo } })).status).toBe(200);
  });

  it("refuses an org or repo name that differs from a taken one only in case", async () => {
    const owner = person("owner");
    const org = await makeOrg(app, owner, unique("casey"));
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(owner)).post("/orgs", { body: { name: org.toUpperCase() } }),
      409,
      "ORG_EXISTS",
    );
    const repo = await makeRepo(app, owner, org, "Docs");
    const twin = repo.replace("/Docs", "/docs");
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(owner)).post("/repos", { body: { owner: org, name: twin } }),
      409,
      "REPO_EXISTS",
    );
  });
});
