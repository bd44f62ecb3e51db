import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { allRoutes } from "../../functions/groups.ts";
import { issueJobToken } from "../../shared/ci/identity/issue.ts";
import { queueAndClaim } from "../ci/support.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner } from "../commits/fixtures.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { client } from "../support/client.ts";

/**
 * The body of every list endpoint, over HTTP, against SPEC.md (docs/api.md "The shape of lists").
 * Where the spec gives the body its words rule: `{orgs: [...]}`, `{repos: [...]}` of an org,
 * `{branches: [...]}`, `{entries: [...]}` of the tree, `{subscriptions: [...]}`, and "200 array
 * of reviews" is a bare array. Where it says the body is not shown, Quire answers one named array.
 * Every GET route is classified below, so a new one has to say which it is.
 */

interface World {
  fx: RepoFixture;
  sequence: number;
  /** The id of proposal #1, which refers to issue #2 (as the commit at `sequence` does). */
  proposal: string;
}

/** `wrapper`: the one key of the object around the array; `null`: the body is the array. */
type ListShape = { wrapper: string | null; url: (w: World) => string };

const lists: Record<string, ListShape> = {
  // The spec gives these bodies.
  "GET /orgs": { wrapper: "orgs", url: () => "/orgs" },
  "GET /orgs/:org/repos": { wrapper: "repos", url: (w) => `/orgs/${w.fx.org}/repos` },
  "GET /repos/:repo*/-/branches": { wrapper: "branches", url: (w) => `${w.fx.base}/branches` },
  "GET /repos/:repo*/-/tree": { wrapper: "entries", url: (w) => `${w.fx.base}/tree?branch=feat` },
  "GET /subscriptions": { wrapper: "subscriptions", url: () => "/subscriptions" },
  "GET /repos/:repo*/-/branch/:branch*/reviews": {
    wrapper: null,
    url: (w) => `${w.fx.base}/branch/feat/reviews`,
  },
  // Issue 24 gives this body: an array of DSSE envelopes (docs/verifiable-history.md).
  "GET /repos/:repo*/-/attestations": { wrapper: null, url: (w) => `${w.fx.base}/attestations?branch=feat` },
  // The spec shows no body: one named array.
  "GET /repos": { wrapper: "repos", url: () => "/repos" },
  "GET /orgs/:org/members": { wrapper: "members", url: (w) => `/orgs/${w.fx.org}/members` },
  "GET /orgs/:org/invites": { wrapper: "invites", url: (w) => `/orgs/${w.fx.org}/invites` },
  "GET /repos/:repo*/-/roles": { wrapper: "roles", url: (w) => `${w.fx.base}/roles` },
  "GET /repos/:repo*/-/secrets": { wrapper: "secrets", url: (w) => `${w.fx.base}/secrets` },
  "GET /repos/:repo*/-/branch/:branch*/checks": {
    wrapper: "check_runs",
    url: (w) => `${w.fx.base}/branch/feat/checks`,
  },
  "GET /repos/:repo*/-/branch/:branch*/comments": {
    wrapper: "comments",
    url: (w) => `${w.fx.base}/branch/feat/comments`,
  },
  "GET /repos/:repo*/-/file/:path*/history": {
    wrapper: "entries",
    url: (w) => `${w.fx.base}/file/a.md/history?branch=feat`,
  },
  "GET /repos/:repo*/-/chain": { wrapper: "commits", url: (w) => `${w.fx.base}/chain?to=${w.sequence}` },
  "GET /repos/:repo*/-/proposals": { wrapper: "proposals", url: (w) => `${w.fx.base}/proposals` },
  "GET /repos/:repo*/-/issues": { wrapper: "issues", url: (w) => `${w.fx.base}/issues` },
  "GET /repos/:repo*/-/commit/:sequence/issues": {
    wrapper: "issues",
    url: (w) => `${w.fx.base}/commit/${w.sequence}/issues`,
  },
  "GET /repos/:repo*/-/proposals/:id/issues": {
    wrapper: "issues",
    url: (w) => `${w.fx.base}/proposals/${w.proposal}/issues`,
  },
  "GET /repos/:repo*/-/issues/:number/comments": {
    wrapper: "comments",
    url: (w) => `${w.fx.base}/issues/2/comments`,
  },
  "GET /repos/:repo*/-/releases": { wrapper: "releases", url: (w) => `${w.fx.base}/releases` },
};

/** GET routes that answer one record, a stream, a file or a redirect: not lists. */
const notLists = [
  "GET /healthz",
  // A search answer: its results with `more` and `capped` beside them (docs/search.md).
  "GET /repos/:repo*/-/search",
  "GET /orgs/:org",
  "GET /repos/:repo*",
  "GET /repos/:repo*/-/branch/:branch*",
  "GET /repos/:repo*/-/branch/:branch*/status",
  "GET /repos/:repo*/-/commit/:sequence",
  "GET /repos/:repo*/-/file/:path*",
  "GET /repos/:repo*/-/diff",
  "GET /repos/:repo*/-/archive",
  "GET /repos/:repo*/-/proposals/:id",
  "GET /repos/:repo*/-/issues/:number",
  // What mentions an issue: three named arrays (docs/issues.md).
  "GET /repos/:repo*/-/issues/:number/refs",
  "GET /repos/:repo*/-/releases/:release_name",
  "GET /repos/:repo*/-/events",
  "GET /events",
  "GET /.well-known/openid-configuration",
  "GET /.well-known/jwks.json",
  // The transparency log: a signed note, its key, and proofs (one record each, docs/verifiable-history.md).
  "GET /.well-known/quire-log-key",
  "GET /repos/:repo*/-/checkpoint",
  "GET /repos/:repo*/-/proof/inclusion",
  "GET /repos/:repo*/-/proof/consistency",
  "GET /run/:id",
  "GET /run/:id/logs/:check*",
  "GET /openapi.json",
  "GET /auth/login",
  "GET /auth/callback",
  "GET /auth/logout",
  "GET /auth/cli",
  "GET /me",
  // The web interface's pages, its static files and `/`: HTML, not JSON lists (docs/web.md).
  "GET /",
  "GET /ui",
  "GET /ui/orgs/:org",
  "GET /ui/static/:hash/:name",
  "GET /ui/repos/:repo*",
  "GET /ui/repos/:repo*/-/tree",
  "GET /ui/repos/:repo*/-/tree/:path*",
  "GET /ui/repos/:repo*/-/compare",
  "GET /ui/repos/:repo*/-/find",
  "GET /ui/repos/:repo*/-/search",
  "GET /ui/repos/:repo*/-/file/:path*",
  "GET /ui/repos/:repo*/-/raw/:path*",
  "GET /ui/repos/:repo*/-/plain/:path*",
  "GET /ui/repos/:repo*/-/history",
  "GET /ui/repos/:repo*/-/edit",
  "GET /ui/repos/:repo*/-/commit/:sequence",
  "GET /ui/repos/:repo*/-/branches",
  "GET /ui/repos/:repo*/-/branch/:branch*",
  "GET /ui/repos/:repo*/-/proposals",
  "GET /ui/repos/:repo*/-/issues",
  "GET /ui/repos/:repo*/-/issues/:number",
  "GET /ui/repos/:repo*/-/proposals/:ref",
  "GET /ui/repos/:repo*/-/releases",
  "GET /ui/repos/:repo*/-/members",
  "GET /ui/repos/:repo*/-/archive",
  "GET /ui/repos/:repo*/-/ci",
  "GET /ui/repos/:repo*/-/ci/:run",
  "GET /ui/repos/:repo*/-/ci/:run/log/:check*",
  "GET /ui/repos/:repo*/-/ci/:run/raw/:check*",
  "GET /ui/repos/:repo*/-/ci/:run/tail/:check*",
  "GET /ui/repos/:repo*/-/ci/checks/:check*",
  "GET /ui/repos/:repo*/-/secrets",
];

let app: TestApp;
let world: World;

/** A repo with at least one of everything a list shows, all visible to its owner. */
async function populate(): Promise<World> {
  const fx = await repoWithOwner(app);
  const expect201 = async (res: Promise<{ status: number; body: unknown }>) => {
    const { status, body } = await res;
    expect(status, JSON.stringify(body)).toBe(201);
  };
  await createBranch(fx, "feat");
  const sequence = await commit(fx, "feat", { "a.md": "a\n" }, "Start on #2");
  const reviewer = `reviewer-${fx.org}@example.com`;
  expect((await fx.client.put(`${fx.base}/roles/${reviewer}`, { role: "writer" })).status).toBe(200);
  await expect201(
    app.as(reviewer).post(`${fx.base}/review`, { branch: "feat", status: "approved", body: "" }),
  );
  await expect201(
    fx.client.post(`${fx.base}/check`, { branch: "feat", check_name: "t/x", status: "passed" }),
  );
  // A CI job's verdict: the one kind of check run that is also an attestation.
  const { job } = await queueAndClaim(app, fx.repo, "feat", { checks: ["t/ci"], createdBy: fx.owner });
  const jobToken = await issueJobToken(app.server.ctx, job, { audience: "quire" });
  await expect201(
    client(app.url, async () => jobToken).post(`${fx.base}/check`, {
      branch: "feat",
      check_name: "t/ci",
      status: "passed",
    }),
  );
  await expect201(fx.client.post(`${fx.base}/comment`, { branch: "feat", path: "a.md", body: "hm" }));
  const proposal = await fx.client.post(`${fx.base}/proposals`, {
    branch: "feat",
    title: "Feat",
    description: "Fixes #2",
  });
  expect(proposal.status).toBe(201);
  // Issue #2 (the proposal took #1), with a comment.
  await expect201(fx.client.post(`${fx.base}/issues`, { title: "Listed" }));
  await expect201(fx.client.post(`${fx.base}/issues/2/comments`, { body: "hm" }));
  await expect201(fx.client.post(`${fx.base}/releases`, { name: "v1", sequence, notes: "" }));
  expect((await fx.client.put(`${fx.base}/secrets/LISTED`, { value: "v" })).status).toBe(200);
  await expect201(fx.client.post(`/orgs/${fx.org}/invites`, { email: "new@example.com", role: "member" }));
  await expect201(
    fx.client.post("/subscriptions", {
      repo: fx.repo,
      backend: "webhook",
      config: { url: "http://127.0.0.1:9/hook" },
    }),
  );
  return { fx, sequence, proposal: (proposal.body as { id: string }).id };
}

beforeAll(async () => {
  app = await startTestApp({ SVC_WEBHOOK_ALLOW_PRIVATE: "true" });
  world = await populate();
});
afterAll(() => app?.close());

describe("the shape of every list", () => {
  it("every GET route is either a list below or named as not one", () => {
    const gets = allRoutes.filter((r) => r.method === "GET").map((r) => `${r.method} ${r.path}`);
    expect([...gets].sort()).toEqual([...Object.keys(lists), ...notLists].sort());
  });

  it.each(Object.entries(lists))("%s", async (_route, { wrapper, url }) => {
    const res = await world.fx.client.get(url(world));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (wrapper === null) {
      const items = z.array(z.unknown()).parse(res.body);
      expect(items.length).toBeGreaterThan(0);
    } else {
      const wrapped = z.record(z.string(), z.unknown()).parse(res.body);
      expect(Object.keys(wrapped)).toEqual([wrapper]);
      expect(z.array(z.unknown()).parse(wrapped[wrapper]).length, JSON.stringify(res.body)).toBeGreaterThan(
        0,
      );
    }
  });
});
