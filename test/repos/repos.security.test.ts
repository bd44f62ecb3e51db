import { describe, expect, it } from "vitest";
import {
  addMember,
  eventsOf,
  expectError,
  expectRefusedWithoutChange,
  person,
  unique,
} from "../orgs/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { errorOf, useFixture, world } from "../support/world.ts";

const app = useFixture(startTestApp);

/** An org with two repos, an owner, a member, an admin of one repo only, and an outsider. */
async function orgWithRepos() {
  const [member, repoAdmin, outsider] = [person("member"), person("repoadmin"), person("outsider")];
  const org = await world(app).org({ name: unique("org"), owner: person("owner"), members: [member] });
  const shared = await org.repo({ name: "shared" });
  const other = await org.repo({ name: "other" });
  await shared.grant(repoAdmin, "admin");
  return {
    org: org.name,
    shared: shared.repo,
    other: other.repo,
    owner: org.owner,
    member,
    repoAdmin,
    outsider,
  };
}

const names = (body: { repos: { name: string }[] }) => body.repos.map((r) => r.name);

describe("who sees a repo", () => {
  it("lists all the org's repos for members, only the granted one for a role holder, none for others", async () => {
    const { org, shared, other, owner, member, repoAdmin, outsider } = await orgWithRepos();
    for (const who of [owner, member]) {
      expect(names(okBody(await api(app.as(who)).get("/repos"))), who).toEqual([other, shared]);
      expect(names(okBody(await api(app.as(who)).get("/orgs/:org/repos", { params: { org } }))), who).toEqual(
        [other, shared],
      );
    }
    expect(names(okBody(await api(app.as(repoAdmin)).get("/repos")))).toEqual([shared]);
    expect(names(okBody(await api(app.as(repoAdmin)).get("/orgs/:org/repos", { params: { org } })))).toEqual([
      shared,
    ]);
    expect(okBody(await api(app.as(outsider)).get("/repos"))).toEqual({ repos: [] });
    expectError(
      await api(app.as(outsider)).get("/orgs/:org/repos", { params: { org } }),
      404,
      "ORG_NOT_FOUND",
    );
  });

  it("lists every repo for a global admin", async () => {
    const { shared, other } = await orgWithRepos();
    const all = names(okBody(await api(app.as(ADMIN)).get("/repos")));
    expect(all).toEqual(expect.arrayContaining([shared, other]));
    const [row] = await app.sql<{ n: number }>("SELECT count(*)::int AS n FROM repos");
    expect(all).toHaveLength(row!.n);
  });

  it("answers 404 REPO_NOT_FOUND to an outsider, exactly as for a missing repo", async () => {
    const { org, shared, outsider } = await orgWithRepos();
    const hidden = await api(app.as(outsider)).get("/repos/:repo*", { params: { repo: shared } });
    const missing = await api(app.as(outsider)).get("/repos/:repo*", { params: { repo: `${org}/missing` } });
    expectError(hidden, 404, "REPO_NOT_FOUND");
    expectError(missing, 404, "REPO_NOT_FOUND");
    expect(errorOf(hidden).error.replace(shared, "X")).toBe(
      errorOf(missing).error.replace(`${org}/missing`, "X"),
    );
    expectError(
      await api(app.as(outsider)).get("/repos/:repo*/-/branches", { params: { repo: shared } }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});

describe("who may create a repo", () => {
  it("refuses an org member who is not an owner with 403 FORBIDDEN", async () => {
    const { org, member } = await orgWithRepos();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(member)).post("/repos", { body: { owner: org, name: `${org}/mine` } }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses a repo admin who is not an org owner with 403", async () => {
    const { org, repoAdmin } = await orgWithRepos();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(repoAdmin)).post("/repos", { body: { owner: org, name: `${org}/mine` } }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses an outsider with 404 ORG_NOT_FOUND, as if the org did not exist", async () => {
    const { org, outsider } = await orgWithRepos();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(outsider)).post("/repos", { body: { owner: org, name: `${org}/mine` } }),
      404,
      "ORG_NOT_FOUND",
    );
  });

  it("refuses a taken name to an outsider with 404, not 409, so the name is not revealed", async () => {
    const { org, shared, outsider } = await orgWithRepos();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(outsider)).post("/repos", { body: { owner: org, name: shared } }),
      404,
      "ORG_NOT_FOUND",
    );
  });
});

describe("who may delete a repo", () => {
  it("refuses a repo admin who is not an org owner with 403 and records no event", async () => {
    const { shared, repoAdmin } = await orgWithRepos();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(repoAdmin)).delete("/repos/:repo*", { params: { repo: shared } }),
      403,
      "FORBIDDEN",
    );
    expect(await eventsOf(app, "com.svc.repo.deleted", `/repos/${shared}`)).toHaveLength(0);
  });

  it("refuses an org member (a reader) with 403", async () => {
    const { shared, member } = await orgWithRepos();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(member)).delete("/repos/:repo*", { params: { repo: shared } }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses an outsider with 404 REPO_NOT_FOUND", async () => {
    const { shared, outsider } = await orgWithRepos();
    await expectRefusedWithoutChange(
      app,
      () => api(app.as(outsider)).delete("/repos/:repo*", { params: { repo: shared } }),
      404,
      "REPO_NOT_FOUND",
    );
  });

  it("lets a second org owner delete a repo someone else created", async () => {
    const { org, shared, owner } = await orgWithRepos();
    const second = person("second");
    await addMember(app, owner, org, second, "owner");
    expect((await api(app.as(second)).delete("/repos/:repo*", { params: { repo: shared } })).status).toBe(
      204,
    );
  });
});

describe("signing in", () => {
  it("is required for every repo endpoint", async () => {
    const { org, shared } = await orgWithRepos();
    const calls = [
      api(app.anonymous).post("/repos", { body: { owner: org, name: `${org}/anon` } }),
      api(app.anonymous).get("/repos"),
      api(app.anonymous).get("/repos/:repo*", { params: { repo: shared } }),
      api(app.anonymous).delete("/repos/:repo*", { params: { repo: shared } }),
    ];
    for (const res of await Promise.all(calls)) expectError(res, 401, "UNAUTHENTICATED");
    expect(await app.sql("SELECT 1 FROM repos WHERE name = $1", [`${org}/anon`])).toHaveLength(0);
  });
});
