import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeOrg, person } from "../orgs/fixtures.ts";
import { api } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { errorOf, expectOk } from "../support/world.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/**
 * `POST /repos` takes `name` full or relative to `owner` (docs/names.md): a name of two or more
 * segments whose first is the owner is full; any other is relative to the owner.
 */
describe("POST /repos with a short or full name", () => {
  const created = async (owner: string, org: string, name: string) => {
    const res = await api(app.as(owner)).post("/repos", { body: { owner: org, name } });
    expectOk(res, 201);
    expect(res.body.owner).toBe(org);
    expect((await api(app.as(owner)).get("/repos/:repo*", { params: { repo: res.body.name } })).status).toBe(
      200,
    );
    return res.body.name as string;
  };

  it("reads each name as the rule says", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const cases: [string, string][] = [
      ["docs", `${org}/docs`], // short
      [`${org}/guide`, `${org}/guide`], // full
      [org, `${org}/${org}`], // one segment equal to the owner: still short
      ["team/notes", `${org}/team/notes`], // short with a slash
      [`${org}/${org}/x`, `${org}/${org}/x`], // full whose second segment is the owner
      [`${org}/a/b/c/d/e/f/g`, `${org}/a/b/c/d/e/f/g`], // full, 8 segments
      ["h/b/c/d/e/f/g", `${org}/h/b/c/d/e/f/g`], // short, 8 segments once the owner is added
    ];
    const got: [string, string][] = [];
    for (const [name] of cases) got.push([name, await created(alice, org, name)]);
    expect(got).toEqual(cases);
  });

  it("answers 409 REPO_EXISTS when the short and the full name mean one repo", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    await created(alice, org, "docs");
    const again = await api(app.as(alice)).post("/repos", { body: { owner: org, name: `${org}/docs` } });
    expect(again.status).toBe(409);
    expect(errorOf(again).code).toBe("REPO_EXISTS");
  });

  it("refuses, naming body.name, a full name whose owner differs in case and names too long once full", async () => {
    const alice = person("alice");
    const org = await makeOrg(app, alice);
    const refused: [string, string][] = [
      [`${org.toUpperCase()}/docs`, `must start with the owner exactly as written, '${org}/...'`],
      ["a/b/c/d/e/f/g/h", `(read as '${org}/a/b/c/d/e/f/g/h')`],
      ["x".repeat(255), `at most 255 characters (read as '${org}/`],
      ["", "must be a repo name"],
      ["/docs", "must be a repo name"],
    ];
    for (const [name, says] of refused) {
      const res = await api(app.as(alice)).post("/repos", { body: { owner: org, name } });
      expect(res.status, name).toBe(400);
      expect(errorOf(res).code).toBe("VALIDATION_FAILED");
      expect(errorOf(res).error).toMatch(/^body\.name: /);
      expect(errorOf(res).error).toContain(says);
    }
    expect(await app.sql("SELECT name FROM repos WHERE owner = $1", [org])).toEqual([]);
  });

  it("creates in the owner org only: a short name never reaches another org", async () => {
    const alice = person("alice");
    const mine = await makeOrg(app, alice);
    const theirs = await makeOrg(app, person("bob"));
    expect(await created(alice, mine, `${theirs}/docs`)).toBe(`${mine}/${theirs}/docs`);
    expect(await app.sql("SELECT name FROM repos WHERE owner = $1", [theirs])).toEqual([]);
  });
});
