import { describe, expect, it } from "vitest";
import {
  expectError,
  expectRefusedWithoutChange,
  makeOrg,
  makeRepo,
  person,
  unique,
} from "../orgs/fixtures.ts";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { errorOf, expectOk, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

const NAME_CODES = ["INVALID_NAME", "VALIDATION_FAILED"];

/** POSTs a repo as the owner of a fresh org; `rest` is the part after `<org>/` (or a function of the org). */
async function createAs(rest: string | ((org: string) => string), owner = person("alice")) {
  const org = await makeOrg(app, owner);
  const name = typeof rest === "function" ? rest(org) : `${org}/${rest}`;
  return { org, name, create: () => api(app.as(owner)).post("/repos", { body: { owner: org, name } }) };
}

describe("creating a repo with a bad name", () => {
  it.each([
    [
      "a single segment only one past 255 once the owner is added",
      (org: string) => "d".repeat(255 - org.length),
    ],
    ["9 segments", (org: string) => `${org}/a/b/c/d/e/f/g/h`],
    ["a segment starting with '-'", (org: string) => `${org}/-docs`],
    ["a segment starting with '.'", (org: string) => `${org}/.docs`],
    ["a '..' segment", (org: string) => `${org}/../docs`],
    ["a '.' segment", (org: string) => `${org}/./docs`],
    ["a '-' segment (the path separator)", (org: string) => `${org}/-/docs`],
    ["a space", (org: string) => `${org}/my docs`],
    ["an empty segment", (org: string) => `${org}//docs`],
    ["a trailing slash", (org: string) => `${org}/docs/`],
    ["a backslash", (org: string) => `${org}/do\\cs`],
    ["a percent sign", (org: string) => `${org}/do%2Fcs`],
    ["more than 255 characters", (org: string) => `${org}/${"d".repeat(256 - org.length)}`],
  ])("refuses %s with 400 naming body.name", async (_why, nameOf) => {
    const { create } = await createAs(nameOf);
    const res = await expectRefusedWithoutChange(app, create, 400, NAME_CODES);
    expect(errorOf(res).error).toContain("body.name");
  });

  it("takes exactly 255 characters", async () => {
    const { create } = await createAs((org) => `${org}/${"d".repeat(254 - org.length)}`);
    expect((await create()).status).toBe(201);
  });

  // A name whose first segment is not the owner is relative to the owner (docs/names.md): it
  // creates a repo in the owner org, never in the org it names.
  it("reads a name whose first segment is another org, or a prefix of the owner, as relative", async () => {
    const alice = person("alice");
    const mine = await makeOrg(app, alice);
    const other = await makeOrg(app, alice);
    for (const name of [`${other}/docs`, `${mine.slice(0, -1)}/docs`]) {
      const res = await api(app.as(alice)).post("/repos", { body: { owner: mine, name } });
      expectOk(res, 201);
      expect(res.body).toMatchObject({ name: `${mine}/${name}`, owner: mine });
    }
    expect(await app.sql("SELECT name FROM repos WHERE owner = $1", [other])).toEqual([]);
  });

  it("refuses a full name whose owner segment differs from the owner only in case", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const res = await expectRefusedWithoutChange(
      app,
      () => api(app.as(alice)).post("/repos", { body: { owner: org, name: `${org.toUpperCase()}/docs` } }),
      400,
      NAME_CODES,
    );
    expect(errorOf(res).error).toContain("body.name");
  });

  it("refuses a missing owner or name with 400 naming the field", async () => {
    const alice = app.as(person("alice"));
    const noOwner = await unchecked(alice).post("/repos", { body: { name: "acme/docs" } });
    expectError(noOwner, 400, "VALIDATION_FAILED");
    expect(errorOf(noOwner).error).toContain("body.owner");
    const noName = await unchecked(alice).post("/repos", { body: { owner: "acme" } });
    expectError(noName, 400, "VALIDATION_FAILED");
    expect(errorOf(noName).error).toContain("body.name");
  });
});

describe("creating a repo that cannot be created", () => {
  it("refuses a taken name with 409 REPO_EXISTS and keeps the first repo untouched", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const repo = await makeRepo(app, alice, org, "team/docs");
    await api(app.as(alice)).post("/repos/:repo*/-/commit", {
      params: { repo },
      body: {
        branch: "main",
        message: "m",
        files: [{ path: "a.md", content: "aGk=" }],
      },
    });
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(alice)).post("/repos", { body: { owner: org, name: repo } }),
      409,
      "REPO_EXISTS",
    );
    expect(
      okBody(
        await api(app.as(alice)).get("/repos/:repo*/-/branch/:branch*", { params: { repo, branch: "main" } }),
      ).head_sequence,
    ).toBe(1);
  });

  it("refuses an org that does not exist with 404 ORG_NOT_FOUND", async () => {
    const missing = unique("nope");
    await expectRefusedWithoutChange(
      app,
      () => app.as(person("alice")).post("/repos", { owner: missing, name: `${missing}/docs` }),
      404,
      "ORG_NOT_FOUND",
    );
  });
});

describe("reading or deleting a repo that is not there", () => {
  it("answers 404 REPO_NOT_FOUND for a missing repo under every path", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const as = app.as(alice);
    for (const path of [
      `/repos/${org}/nope`,
      `/repos/${org}/nope/-/branches`,
      `/repos/${org}/nope/-/roles`,
    ]) {
      expectError(await as.get(path), 404, "REPO_NOT_FOUND");
    }
    await expectRefusedWithoutChange(
      app,
      () => api(as).delete("/repos/:repo*", { params: { repo: `${org}/nope` } }),
      404,
      "REPO_NOT_FOUND",
    );
  });

  it("answers 404 the second time a repo is deleted", async () => {
    const alice = person("alice");
    const repo = await makeRepo(app, alice, await makeOrg(app, alice));
    expect((await api(app.as(alice)).delete("/repos/:repo*", { params: { repo } })).status).toBe(204);
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(alice)).delete("/repos/:repo*", { params: { repo } }),
      404,
      "REPO_NOT_FOUND",
    );
  });

  it("does not resolve a prefix or an extension of a repo's name", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    await makeRepo(app, alice, org, "team/docs");
    expectError(
      await api(app.as(alice)).get("/repos/:repo*", { params: { repo: `${org}/team` } }),
      404,
      "REPO_NOT_FOUND",
    );
    expectError(
      await api(app.as(alice)).get("/repos/:repo*", { params: { repo: `${org}/team/docs/more` } }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});
