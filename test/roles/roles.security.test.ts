import { describe, expect, it } from "vitest";
import {
  addMember,
  commitBody,
  expectError,
  expectRefusedWithoutChange,
  grant,
  person,
  unique,
} from "../orgs/fixtures.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";

const app = useFixture(startTestApp);

/** A repo whose admin has created a `feature` branch. */
async function repoWithBranch() {
  const org = await world(app).org({ name: unique("org"), owner: person("alice") });
  const repo = await org.repo({ name: "team/docs" });
  await repo.branch("feature");
  return { admin: org.owner, org: org.name, repo: repo.repo };
}

const headOf = async (repo: string, branch: string) =>
  (
    await app.sql<{ head: number }>(
      "SELECT b.head_sequence AS head FROM branches b JOIN repos r ON r.id = b.repo_id WHERE r.name = $1 AND b.name = $2",
      [repo, branch],
    )
  )[0]!.head;

describe("what a role lets its holder do", () => {
  it("reader reads but cannot commit; writer commits to a branch but not to main; revoked sees nothing", async () => {
    const { admin, repo } = await repoWithBranch();
    const bob = person("bob");
    const as = app.as(bob);

    expectError(await as.get(`/repos/${repo}`), 404, "REPO_NOT_FOUND");

    await grant(app, admin, repo, bob, "reader");
    expect((await as.get(`/repos/${repo}`)).status).toBe(200);
    expect((await as.get(`/repos/${repo}/-/branch/feature`)).status).toBe(200);
    await expectRefusedWithoutChange(
      app,
      () => as.post(`/repos/${repo}/-/commit`, commitBody("feature")),
      403,
      "FORBIDDEN",
    );

    await grant(app, admin, repo, bob, "writer");
    const commit = await as.post(`/repos/${repo}/-/commit`, commitBody("feature"));
    expect(commit.status).toBe(201);
    expect(commit.body).toMatchObject({ sequence: 1, author: bob });
    expect(await headOf(repo, "feature")).toBe(1);
    await expectRefusedWithoutChange(
      app,
      () => as.post(`/repos/${repo}/-/commit`, commitBody("main")),
      403,
      "FORBIDDEN",
    );
    expect(await headOf(repo, "main")).toBe(0);

    expect((await app.as(admin).delete(`/repos/${repo}/-/roles/${bob}`)).status).toBe(204);
    expectError(await as.get(`/repos/${repo}`), 404, "REPO_NOT_FOUND");
    expectError(await as.post(`/repos/${repo}/-/commit`, commitBody("feature")), 404, "REPO_NOT_FOUND");
    expect((await as.get("/repos")).body).toEqual({ repos: [] });
  });

  it("maintainer commits to main", async () => {
    const { admin, repo } = await repoWithBranch();
    const bob = person("bob");
    await grant(app, admin, repo, bob, "maintainer");
    expect((await app.as(bob).post(`/repos/${repo}/-/commit`, commitBody("main"))).status).toBe(201);
    expect(await headOf(repo, "main")).toBe(1);
  });

  it("a repo role lifts an org member above the reader access membership gives", async () => {
    const { admin, org, repo } = await repoWithBranch();
    const bob = person("bob");
    await addMember(app, admin, org, bob);
    await expectRefusedWithoutChange(
      app,
      () => app.as(bob).post(`/repos/${repo}/-/commit`, commitBody("feature")),
      403,
      "FORBIDDEN",
    );
    await grant(app, admin, repo, bob, "writer");
    expect((await app.as(bob).post(`/repos/${repo}/-/commit`, commitBody("feature"))).status).toBe(201);
  });

  it("a revoked org member still reads through membership", async () => {
    const { admin, org, repo } = await repoWithBranch();
    const bob = person("bob");
    await addMember(app, admin, org, bob);
    await grant(app, admin, repo, bob, "writer");
    expect((await app.as(admin).delete(`/repos/${repo}/-/roles/${bob}`)).status).toBe(204);
    expect((await app.as(bob).get(`/repos/${repo}`)).status).toBe(200);
    expectError(await app.as(bob).post(`/repos/${repo}/-/commit`, commitBody("feature")), 403, "FORBIDDEN");
  });
});

describe("who may manage roles", () => {
  it.each(["reader", "writer", "maintainer"] as const)("refuses a %s with 403 FORBIDDEN", async (role) => {
    const { admin, repo } = await repoWithBranch();
    const bob = person("bob");
    await grant(app, admin, repo, bob, role);
    const as = app.as(bob);
    expectError(await as.get(`/repos/${repo}/-/roles`), 403, "FORBIDDEN");
    await expectRefusedWithoutChange(
      app,
      () => as.put(`/repos/${repo}/-/roles/${bob}`, { role: "admin" }),
      403,
      "FORBIDDEN",
    );
    await expectRefusedWithoutChange(
      app,
      () => as.delete(`/repos/${repo}/-/roles/${admin}`),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses a plain org member with 403", async () => {
    const { admin, org, repo } = await repoWithBranch();
    const bob = person("bob");
    await addMember(app, admin, org, bob);
    await expectRefusedWithoutChange(
      app,
      () => app.as(bob).put(`/repos/${repo}/-/roles/${bob}`, { role: "admin" }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses an outsider with 404 REPO_NOT_FOUND", async () => {
    const { admin, repo } = await repoWithBranch();
    const eve = app.as(person("eve"));
    expectError(await eve.get(`/repos/${repo}/-/roles`), 404, "REPO_NOT_FOUND");
    await expectRefusedWithoutChange(
      app,
      () => eve.put(`/repos/${repo}/-/roles/x@example.com`, { role: "admin" }),
      404,
      "REPO_NOT_FOUND",
    );
    await expectRefusedWithoutChange(
      app,
      () => eve.delete(`/repos/${repo}/-/roles/${admin}`),
      404,
      "REPO_NOT_FOUND",
    );
  });

  it("needs a signed-in caller (401)", async () => {
    const { admin, repo } = await repoWithBranch();
    expectError(await app.anonymous.get(`/repos/${repo}/-/roles`), 401, "UNAUTHENTICATED");
    await expectRefusedWithoutChange(
      app,
      () => app.anonymous.put(`/repos/${repo}/-/roles/${admin}`, { role: "reader" }),
      401,
      "UNAUTHENTICATED",
    );
  });

  it("a granted admin manages roles, and loses that on demotion", async () => {
    const { admin, repo } = await repoWithBranch();
    const bob = person("bob");
    await grant(app, admin, repo, bob, "admin");
    expect((await app.as(bob).get(`/repos/${repo}/-/roles`)).status).toBe(200);
    await grant(app, admin, repo, bob, "writer");
    expectError(await app.as(bob).get(`/repos/${repo}/-/roles`), 403, "FORBIDDEN");
  });
});
