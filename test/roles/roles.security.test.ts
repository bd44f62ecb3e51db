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
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, useFixture, world } from "../support/world.ts";

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

    expectError(await api(as).get("/repos/:repo*", { params: { repo } }), 404, "REPO_NOT_FOUND");

    await grant(app, admin, repo, bob, "reader");
    expect((await api(as).get("/repos/:repo*", { params: { repo } })).status).toBe(200);
    expect(
      (await api(as).get("/repos/:repo*/-/branch/:branch*", { params: { repo, branch: "feature" } })).status,
    ).toBe(200);
    await expectRefusedWithoutChange(
      app,
      () => api(as).post("/repos/:repo*/-/commit", { params: { repo }, body: commitBody("feature") }),
      403,
      "FORBIDDEN",
    );

    await grant(app, admin, repo, bob, "writer");
    const commit = await api(as).post("/repos/:repo*/-/commit", {
      params: { repo },
      body: commitBody("feature"),
    });
    expectOk(commit, 201);
    expect(commit.body).toMatchObject({ sequence: 1, author: bob });
    expect(await headOf(repo, "feature")).toBe(1);
    await expectRefusedWithoutChange(
      app,
      () => api(as).post("/repos/:repo*/-/commit", { params: { repo }, body: commitBody("main") }),
      403,
      "FORBIDDEN",
    );
    expect(await headOf(repo, "main")).toBe(0);

    expect(
      (
        await api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: bob },
        })
      ).status,
    ).toBe(204);
    expectError(await api(as).get("/repos/:repo*", { params: { repo } }), 404, "REPO_NOT_FOUND");
    expectError(
      await api(as).post("/repos/:repo*/-/commit", { params: { repo }, body: commitBody("feature") }),
      404,
      "REPO_NOT_FOUND",
    );
    expect(okBody(await api(as).get("/repos"))).toEqual({ repos: [] });
  });

  it("maintainer commits to main", async () => {
    const { admin, repo } = await repoWithBranch();
    const bob = person("bob");
    await grant(app, admin, repo, bob, "maintainer");
    expect(
      (await api(app.as(bob)).post("/repos/:repo*/-/commit", { params: { repo }, body: commitBody("main") }))
        .status,
    ).toBe(201);
    expect(await headOf(repo, "main")).toBe(1);
  });

  it("a repo role lifts an org member above the reader access membership gives", async () => {
    const { admin, org, repo } = await repoWithBranch();
    const bob = person("bob");
    await addMember(app, admin, org, bob);
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.as(bob)).post("/repos/:repo*/-/commit", { params: { repo }, body: commitBody("feature") }),
      403,
      "FORBIDDEN",
    );
    await grant(app, admin, repo, bob, "writer");
    expect(
      (
        await api(app.as(bob)).post("/repos/:repo*/-/commit", {
          params: { repo },
          body: commitBody("feature"),
        })
      ).status,
    ).toBe(201);
  });

  it("a revoked org member still reads through membership", async () => {
    const { admin, org, repo } = await repoWithBranch();
    const bob = person("bob");
    await addMember(app, admin, org, bob);
    await grant(app, admin, repo, bob, "writer");
    expect(
      (
        await api(app.as(admin)).delete("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: bob },
        })
      ).status,
    ).toBe(204);
    expect((await api(app.as(bob)).get("/repos/:repo*", { params: { repo } })).status).toBe(200);
    expectError(
      await api(app.as(bob)).post("/repos/:repo*/-/commit", {
        params: { repo },
        body: commitBody("feature"),
      }),
      403,
      "FORBIDDEN",
    );
  });
});

describe("who may manage roles", () => {
  it.each(["reader", "writer", "maintainer"] as const)("refuses a %s with 403 FORBIDDEN", async (role) => {
    const { admin, repo } = await repoWithBranch();
    const bob = person("bob");
    await grant(app, admin, repo, bob, role);
    const as = app.as(bob);
    expectError(await api(as).get("/repos/:repo*/-/roles", { params: { repo } }), 403, "FORBIDDEN");
    await expectRefusedWithoutChange(
      app,
      () =>
        api(as).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: bob },
          body: { role: "admin" },
        }),
      403,
      "FORBIDDEN",
    );
    await expectRefusedWithoutChange(
      app,
      () => api(as).delete("/repos/:repo*/-/roles/:identity", { params: { repo, identity: admin } }),
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
      () =>
        api(app.as(bob)).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: bob },
          body: { role: "admin" },
        }),
      403,
      "FORBIDDEN",
    );
  });

  it("refuses an outsider with 404 REPO_NOT_FOUND", async () => {
    const { admin, repo } = await repoWithBranch();
    const eve = app.as(person("eve"));
    expectError(await api(eve).get("/repos/:repo*/-/roles", { params: { repo } }), 404, "REPO_NOT_FOUND");
    await expectRefusedWithoutChange(
      app,
      () =>
        api(eve).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: "x@example.com" },
          body: { role: "admin" },
        }),
      404,
      "REPO_NOT_FOUND",
    );
    await expectRefusedWithoutChange(
      app,
      () => api(eve).delete("/repos/:repo*/-/roles/:identity", { params: { repo, identity: admin } }),
      404,
      "REPO_NOT_FOUND",
    );
  });

  it("needs a signed-in caller (401)", async () => {
    const { admin, repo } = await repoWithBranch();
    expectError(
      await api(app.anonymous).get("/repos/:repo*/-/roles", { params: { repo } }),
      401,
      "UNAUTHENTICATED",
    );
    await expectRefusedWithoutChange(
      app,
      () =>
        api(app.anonymous).put("/repos/:repo*/-/roles/:identity", {
          params: { repo, identity: admin },
          body: { role: "reader" },
        }),
      401,
      "UNAUTHENTICATED",
    );
  });

  it("a granted admin manages roles, and loses that on demotion", async () => {
    const { admin, repo } = await repoWithBranch();
    const bob = person("bob");
    await grant(app, admin, repo, bob, "admin");
    expect((await api(app.as(bob)).get("/repos/:repo*/-/roles", { params: { repo } })).status).toBe(200);
    await grant(app, admin, repo, bob, "writer");
    expectError(await api(app.as(bob)).get("/repos/:repo*/-/roles", { params: { repo } }), 403, "FORBIDDEN");
  });
});
