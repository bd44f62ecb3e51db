import { beforeAll, describe, expect, it } from "vitest";
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
  () => c.post(`${fx.base}/releases`, { name: `${name}-new`, sequence: seq, notes: "" }),
  () => c.get(`${fx.base}/releases`),
  () => c.get(`${fx.base}/releases/${name}`),
  () => c.delete(`${fx.base}/releases/${name}`),
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
      expect((await c.get(`${fx.base}/releases`)).status).toBe(200);
      expect((await c.get(`${fx.base}/releases/readable`)).body).toEqual(r);
      await refused(
        () => c.post(`${fx.base}/releases`, { name: `by-${role}`, sequence: seq, notes: "" }),
        403,
        "FORBIDDEN",
      );
      await refused(() => c.delete(`${fx.base}/releases/readable`), 403, "FORBIDDEN");
    }
  });

  it("a maintainer creates a release (as its creator) but may not delete it (403)", async () => {
    const m = app.as(who("maintainer"));
    const r = await release(fx, { name: "by-maintainer", sequence: seq, notes: "" }, m);
    expect(r.created_by).toBe(who("maintainer"));
    await refused(() => m.delete(`${fx.base}/releases/by-maintainer`), 403, "FORBIDDEN");
    expect((await m.get(`${fx.base}/releases/by-maintainer`)).status).toBe(200);
  });

  it("an admin, the org owner and a global admin delete releases", async () => {
    for (const [i, c] of [app.as(who("admin")), fx.client, app.as("admin@quire.test")].entries()) {
      await release(fx, { name: `doomed-${i}`, sequence: seq, notes: "" });
      expect((await c.delete(`${fx.base}/releases/doomed-${i}`)).status).toBe(204);
      expectError(await c.get(`${fx.base}/releases/doomed-${i}`), 404, "RELEASE_NOT_FOUND");
    }
  });

  it("an org member reads releases but may not create one", async () => {
    const member = "member@people.test";
    expect((await fx.client.post(`/orgs/${fx.org}/members/${member}`, { role: "member" })).status).toBe(201);
    expect((await app.as(member).get(`${fx.base}/releases`)).status).toBe(200);
    await refused(
      () => app.as(member).post(`${fx.base}/releases`, { name: "by-member", sequence: seq, notes: "" }),
      403,
      "FORBIDDEN",
    );
  });
});
