import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../functions/groups.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { startTestIdp, type TestIdp } from "../support/idp.ts";
import { type CommonAuthContext, runCommonAuthTests } from "./common.ts";
import { type Call, concretePath, routeKey, World } from "./world.ts";

/**
 * Missing or invalid credentials answer 401 on every endpoint except the public ones. The loop runs
 * over the route tables themselves, so a new endpoint without an entry below fails the coverage
 * test instead of being skipped. Paths name objects that exist, and bodies are valid, so the only
 * thing wrong with each request is its credentials.
 */

let app: TestApp;
let foreignIdp: TestIdp;
let world: World;
beforeAll(async () => {
  [app, foreignIdp] = await Promise.all([startTestApp(), startTestIdp()]);
  world = await World.create(app);
});
afterAll(async () => {
  await foreignIdp?.close();
  await app?.close();
});

const ctx = (): CommonAuthContext => ({ app, foreignIdp });

/** Per route: its query string and body; `public` marks the routes that need no credentials. */
interface Probe {
  query?: string;
  body?: (w: World) => unknown;
  public?: true;
}

const probes: Record<string, Probe> = {
  "GET /healthz": { public: true },
  "GET /openapi.json": { public: true },
  "POST /orgs": { body: (w) => ({ name: w.unique("probe-org") }) },
  "GET /orgs": {},
  "GET /orgs/:org": {},
  "DELETE /orgs/:org": {},
  "GET /orgs/:org/repos": {},
  "GET /orgs/:org/members": {},
  "POST /orgs/:org/members/:identity": { body: () => ({ role: "member" }) },
  "DELETE /orgs/:org/members/:identity": {},
  "GET /orgs/:org/invites": {},
  "POST /orgs/:org/invites": { body: () => ({ email: "someone@authz.test", role: "member" }) },
  "POST /orgs/:org/invites/:token/accept": {},
  "DELETE /orgs/:org/invites/:id": {},
  "GET /repos/:repo*/-/roles": {},
  "PUT /repos/:repo*/-/roles/:identity": { body: () => ({ role: "reader" }) },
  "DELETE /repos/:repo*/-/roles/:identity": {},
  "GET /repos/:repo*/-/branches": {},
  "POST /repos/:repo*/-/branch": { body: (w) => ({ name: w.unique("probe-branch") }) },
  "GET /repos/:repo*/-/branch/:branch*": {},
  "PATCH /repos/:repo*/-/branch/:branch*": { body: () => ({ draft: false }) },
  "DELETE /repos/:repo*/-/branch/:branch*": {},
  "POST /repos/:repo*/-/commit": {
    body: (w) => ({ branch: w.branch, message: "m", files: [{ path: "probe.md", content: b64("x") }] }),
  },
  "GET /repos/:repo*/-/commit/:sequence": {},
  "GET /repos/:repo*/-/tree": {},
  "GET /repos/:repo*/-/file/:path*/history": {},
  "GET /repos/:repo*/-/file/:path*": {},
  "GET /repos/:repo*/-/diff": { query: "?branch=feature" },
  "GET /repos/:repo*/-/chain": { query: "?from=1&to=1" },
  "POST /repos": { body: (w) => ({ owner: w.org, name: `${w.org}/${w.unique("probe-repo")}` }) },
  "GET /repos": {},
  "GET /repos/:repo*": {},
  "DELETE /repos/:repo*": {},
};

/** The real request of a route, against the shared fixtures. */
function callFor(method: Call["method"], pattern: string, probe: Probe): Call {
  const path = concretePath(pattern, {
    org: world.org,
    repo: world.repo,
    branch: world.branch,
    identity: "member@authz.test",
    token: world.invite.token,
    id: world.invite.id,
    sequence: String(world.sequence),
    path: world.file,
  });
  return { method, path: path + (probe.query ?? ""), body: probe.body?.(world) };
}

let covered = 0;
for (const route of allRoutes) {
  const key = routeKey(route);
  const probe = probes[key];
  describe(key, () => {
    if (!probe) {
      it("has a probe in test/authz/credentials.test.ts", () => {
        expect.fail(`add "${key}" to the probes table`);
      });
      return;
    }
    covered++;
    if (probe.public) {
      it("is public: answers without credentials and ignores bad ones", async () => {
        expect(route.access).toBe("public");
        for (const authorization of [undefined, "Basic x", "Bearer not-a-token"]) {
          const call = callFor(route.method, route.path, probe);
          const res = await app.anonymous.raw(call.method, call.path, {
            headers: authorization ? { authorization } : {},
          });
          expect(res.status).toBe(200);
        }
      });
      return;
    }
    it("is not public in its route table", () => expect(route.access).not.toBe("public"));
    runCommonAuthTests(ctx, (authorization) => {
      const call = callFor(route.method, route.path, probe);
      const headers: Record<string, string> = authorization ? { authorization } : {};
      if (call.body === undefined) return app.anonymous.raw(call.method, call.path, { headers });
      headers["content-type"] = "application/json";
      return app.anonymous.raw(call.method, call.path, { headers, body: JSON.stringify(call.body) });
    });
  });
}

describe("coverage", () => {
  it("checks every route of functions/groups.ts allRoutes", () => {
    expect(covered).toBe(allRoutes.length);
  });
  it("has no probe for a route that does not exist", () => {
    const keys = new Set(allRoutes.map(routeKey));
    expect(Object.keys(probes).filter((k) => !keys.has(k))).toEqual([]);
  });
  it("marks public exactly the routes whose table says public", () => {
    const publicRoutes = allRoutes.filter((r) => r.access === "public").map(routeKey);
    const publicProbes = Object.entries(probes)
      .filter(([, p]) => p.public)
      .map(([k]) => k);
    expect(publicProbes.sort()).toEqual(publicRoutes.sort());
  });
});
