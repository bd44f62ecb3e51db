import { beforeAll, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import type { Client, Res } from "../support/client.ts";
import { commit, expectError, grant, repoWithOwner, useFixture } from "../support/world.ts";
import { release, releaseState } from "./fixtures.ts";

let seq: number;
const who = (role: string) => `${role}@people.test`;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  seq = await commit(fx, "main", { "a.md": "one" });
  for (const role of ["reader", "writer", "maintainer", "admin"] as const) await grant(fx, who(role), role);
});

async function refused(request: () => Promise<Res>, status: number, code: string) {
  const before = await releaseState(app, fx);
  expectError(await request(), status, code);
  expect(await releaseState(app, fx)).toEqual(before);
}

const requests = (c: Client, name: string) => [
  () =>
    api(c).post("/repos/:repo*/-/releases", {
      params: { repo: fx.repo },
      body: { name: `${name}-new`, sequence: seq, notes: "" },
    }),
  () => api(c).get("/repos/:repo*/-/releases", { params: { repo: fx.repo } }),
  () =>
    api(c).get("/repos/:repo*/-/releases/:release_name", { params: { repo: fx.repo, release_name: name } }),
  () =>
    api(c).delete("/repos/:repo*/-/releases/:release_name", {
      params: { repo: fx.repo, release_name: name },
    }),
];

describe("callers who may not see the repo", () => {
  it("anonymous: 401 on every release endpoint; a stranger: 404 REPO_NOT_FOUND", async () => {
    await release(fx, { name: "hidden", sequence: seq, notes: "" });
    for (const r of requests(app.anonymous, "hidden")) await refused(r, 401, "UNAUTHENTICATED");
    for (const r of requests(app.as("stranger@people.test"), "hidden"))
      await refused(r, 404, "REPO_NOT_FOUND");
  });
});

describe("roles", () => {
  it("a reader and a writer read releases but may neither create nor delete one (403)", async () => {
    const r = await release(fx, { name: "readable", sequence: seq, notes: "n" });
    for (const role of ["reader", "writer"]) {
      const c = app.as(who(role));
      expect((await api(c).get("/repos/:repo*/-/releases", { params: { repo: fx.repo } })).status).toBe(200);
      expect(
        okBody(
          await api(c).get("/repos/:repo*/-/releases/:release_name", {
            params: { repo: fx.repo, release_name: "readable" },
          }),
        ),
      ).toEqual(r);
      await refused(
        () =>
          api(c).post("/repos/:repo*/-/releases", {
            params: { repo: fx.repo },
            body: { name: `by-${role}`, sequence: seq, notes: "" },
          }),
        403,
        "FORBIDDEN",
      );
      await refused(
        () =>
          api(c).delete("/repos/:repo*/-/releases/:release_name", {
            params: { repo: fx.repo, release_name: "readable" },
          }),
        403,
        "FORBIDDEN",
      );
    }
  });

  it("a maintainer creates a release (as its creator) but may not delete it (403)", async () => {
    const m = app.as(who("maintainer"));
    const r = await release(fx, { name: "by-maintainer", sequence: seq, notes: "" }, m);
    expect(r.created_by).toBe(who("maintainer"));
    await refused(
      () =>
        api(m).delete("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "by-maintainer" },
        }),
      403,
      "FORBIDDEN",
    );
    expect(
      (
        await api(m).get("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "by-maintainer" },
        })
      ).status,
    ).toBe(200);
  });

  it("an admin, the org owner and a global admin delete releases", async () => {
    for (const [i, c] of [app.as(who("admin")), fx.client, app.as("admin@quire.test")].entries()) {
      await release(fx, { name: `doomed-${i}`, sequence: seq, notes: "" });
      expect(
        (
          await api(c).delete("/repos/:repo*/-/releases/:release_name", {
            params: { repo: fx.repo, release_name: `doomed-${i}` },
          })
        ).status,
      ).toBe(204);
      expectError(
        await api(c).get("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: `doomed-${i}` },
        }),
        404,
        "RELEASE_NOT_FOUND",
      );
    }
  });

  it("an org member reads releases but may not create one", async () => {
    const member = "member@people.test";
    expect(
      (
        await api(fx.client).post("/orgs/:org/members/:identity", {
          params: { org: fx.org, identity: member },
          body: { role: "member" },
        })
      ).status,
    ).toBe(201);
    expect(
      (await api(app.as(member)).get("/repos/:repo*/-/releases", { params: { repo: fx.repo } })).status,
    ).toBe(200);
    await refused(
      () =>
        api(app.as(member)).post("/repos/:repo*/-/releases", {
          params: { repo: fx.repo },
          body: { name: "by-member", sequence: seq, notes: "" },
        }),
      403,
      "FORBIDDEN",
    );
  });
});
