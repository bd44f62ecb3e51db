import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../functions/groups.ts";
import { styles } from "../../functions/web/assets.ts";
import { presignArchiveUrl } from "../../shared/archives/presign.ts";
import { signedLogUrl } from "../../shared/ci/jobs/logs.ts";
import { type AnyRoute, kindOf } from "../../shared/http/route.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { startTestIdp, type TestIdp } from "../support/idp.ts";
import { type CommonAuthContext, runCommonAuthTests } from "./common.ts";
import { authzEnv, type Call, concretePath, routeKey, sendRaw, World } from "./world.ts";

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
  [app, foreignIdp] = await Promise.all([startTestApp(authzEnv), startTestIdp()]);
  world = await World.create(app);
  const url = await presignArchiveUrl(app.server.ctx, {
    repo: world.repo,
    branch: "main",
    sequence: world.sequence,
    baseUrl: "",
  });
  presignedArchiveQuery = url.slice(url.indexOf("?"));
  const log = await signedLogUrl(app.server.ctx, world.jobs.job.id, world.loggedCheck);
  signedLogQuery = log.slice(log.indexOf("?"));
});
afterAll(async () => {
  await world?.close();
  await foreignIdp?.close();
  await app?.close();
});

const ctx = (): CommonAuthContext => ({ app, foreignIdp });

/**
 * Per route: its query string, body and the path parameters that differ from the shared ones;
 * `public` marks the routes that need no credentials. A public route whose handler authenticates
 * another form of the request itself names that form's query in `authenticatedQuery`, and that
 * form gets the common credential checks too.
 */
interface Probe {
  query?: string | (() => string);
  body?: (w: World) => unknown;
  params?: (w: World) => Record<string, string>;
  public?: true;
  /** What a public route answers whatever credentials are sent: 200 unless given. */
  publicStatus?: number;
  authenticatedQuery?: string;
  /** Headers of the request itself (the webhook's signature). */
  headers?: (w: World) => Promise<Record<string, string>>;
  /** Not an ID-token route: the valid credential of its control (a request token, the worker token). */
  control?: { what: string; authorization: (w: World) => string };
}

const requestToken = {
  what: "the job's live request token",
  authorization: (w: World) => `Bearer ${w.jobs.job.requestToken}`,
};

/** The query of a genuine presigned archive URL for the fixture repo, made once the app runs. */
let presignedArchiveQuery = "";
/** The query of a genuine signed URL of the stored log of the fixture job. */
let signedLogQuery = "";

const probes: Record<string, Probe> = {
  "GET /healthz": { public: true },
  "GET /openapi.json": { public: true },
  "GET /.well-known/openid-configuration": { public: true },
  "GET /.well-known/jwks.json": { public: true },
  "GET /.well-known/quire-log-key": { public: true },
  "GET /auth/cli": { public: true },
  // Browser sign-in: a redirect to the provider; a callback without this browser's login cookie
  // is 400; sign-out without a session clears the cookie and shows the sign-out page.
  "GET /auth/login": { public: true, publicStatus: 302 },
  "GET /auth/callback": { public: true, publicStatus: 400, query: "?code=c&state=s" },
  "GET /auth/logout": { public: true },
  "POST /auth/logout": { public: true, publicStatus: 303 },
  "POST /orgs": { body: (w) => ({ name: w.unique("probe-org") }) },
  "GET /me": {},
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
  "GET /repos/:repo*/-/secrets": {},
  "PUT /repos/:repo*/-/secrets/:secret": {
    params: () => ({ secret: "PROBE" }),
    body: () => ({ value: "probe" }),
  },
  "DELETE /repos/:repo*/-/secrets/:secret": { params: () => ({ secret: "PROBE" }) },
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
  "GET /repos/:repo*/-/checkpoint": {},
  "POST /repos/:repo*/-/checkpoint/cosignatures": {
    body: () => ({ witness_key: "w+00000000+AA==", checkpoint: "x" }),
  },
  "GET /repos/:repo*/-/proof/inclusion": { query: "?sequence=1&size=1" },
  "GET /repos/:repo*/-/proof/consistency": { query: "?from=1&to=1" },
  "GET /repos/:repo*/-/attestations": { query: "?branch=main" },
  "GET /repos/:repo*/-/search": { query: "?q=hello" },
  "POST /repos/:repo*/-/review": { body: (w) => ({ branch: w.branch, status: "rejected", body: "" }) },
  "GET /repos/:repo*/-/branch/:branch*/reviews": {},
  "POST /repos/:repo*/-/check": {
    body: (w) => ({ branch: w.branch, check_name: "probe/check", status: "passed" }),
  },
  "GET /repos/:repo*/-/branch/:branch*/checks": {},
  "POST /repos/:repo*/-/comment": { body: (w) => ({ branch: w.branch, path: w.file, body: "probe" }) },
  "GET /repos/:repo*/-/branch/:branch*/comments": {},
  "DELETE /repos/:repo*/-/comment/:id": { params: (w) => ({ id: w.comment }) },
  "POST /repos/:repo*/-/proposals": { body: (w) => ({ branch: w.branch, title: "probe" }) },
  "GET /repos/:repo*/-/proposals": {},
  "GET /repos/:repo*/-/proposals/:id": { params: (w) => ({ id: w.proposal }) },
  "PATCH /repos/:repo*/-/proposals/:id": {
    params: (w) => ({ id: w.proposal }),
    body: () => ({ title: "probe" }),
  },
  "POST /repos/:repo*/-/proposals/:id/close": { params: (w) => ({ id: w.proposal }) },
  "POST /repos/:repo*/-/issues": { body: () => ({ title: "probe" }) },
  "GET /repos/:repo*/-/issues": {},
  "GET /repos/:repo*/-/issues/:number": { params: () => ({ number: "1" }) },
  "PATCH /repos/:repo*/-/issues/:number": {
    params: () => ({ number: "1" }),
    body: () => ({ title: "probe" }),
  },
  "POST /repos/:repo*/-/issues/:number/close": { params: () => ({ number: "1" }) },
  "POST /repos/:repo*/-/issues/:number/reopen": { params: () => ({ number: "1" }) },
  "GET /repos/:repo*/-/issues/:number/comments": { params: () => ({ number: "1" }) },
  "POST /repos/:repo*/-/issues/:number/comments": {
    params: () => ({ number: "1" }),
    body: () => ({ body: "probe" }),
  },
  "PATCH /repos/:repo*/-/issues/:number/comments/:comment": {
    params: () => ({ number: "1", comment: "00000000-0000-4000-8000-000000000000" }),
    body: () => ({ body: "probe" }),
  },
  "DELETE /repos/:repo*/-/issues/:number/comments/:comment": {
    params: () => ({ number: "1", comment: "00000000-0000-4000-8000-000000000000" }),
  },
  "GET /repos/:repo*/-/commit/:sequence/issues": {},
  "GET /repos/:repo*/-/proposals/:id/issues": { params: (w) => ({ id: w.proposal }) },
  "GET /repos/:repo*/-/issues/:number/refs": { params: () => ({ number: "1" }) },
  "POST /repos/:repo*/-/issues/:number/refs": {
    params: () => ({ number: "1" }),
    body: (w) => ({ ref_type: "commit", ref_id: String(w.sequence) }),
  },
  "POST /repos/:repo*/-/releases": { body: (w) => ({ name: w.unique("probe-rel"), sequence: w.sequence }) },
  "GET /repos/:repo*/-/releases": {},
  "GET /repos/:repo*/-/releases/:release_name": {},
  "DELETE /repos/:repo*/-/releases/:release_name": {},
  "POST /repos/:repo*/-/merge": { body: (w) => ({ branch: w.branch }) },
  "POST /repos/:repo*/-/rebase": { body: (w) => ({ branch: w.branch }) },
  "GET /repos/:repo*/-/branch/:branch*/status": {},
  "POST /repos/:repo*/-/branch/:branch*/auto-merge": {},
  "DELETE /repos/:repo*/-/branch/:branch*/auto-merge": {},
  "POST /repos/:repo*/-/purge": { body: () => ({ older_than: "1d" }) },
  // Public for its presigned form; the ordinary form (no sig, no expires) needs a reader.
  "GET /repos/:repo*/-/archive": {
    public: true,
    query: () => presignedArchiveQuery,
    authenticatedQuery: "?branch=main&at=1",
  },
  "GET /repos/:repo*/-/events": {},
  "GET /events": {},
  "POST /subscriptions": { body: (w) => w.subscriptionBody() },
  "GET /subscriptions": {},
  "DELETE /subscriptions/:id": { params: (w) => ({ id: w.subscription }) },
  "POST /subscriptions/:id/resume": { params: (w) => ({ id: w.subscription }) },
  "POST /repos/:repo*/-/ci/run": { body: (w) => ({ branch: w.ciBranch }) },
  "POST /repos/:repo*/-/archive/presign": { control: requestToken },
  "POST /repos/:repo*/-/secrets/reveal": {
    body: () => ({ check_name: "authz/check", names: ["AUTHZ"] }),
    control: requestToken,
  },
  "POST /repos/:repo*/-/check/:check*/logs": {
    params: (w) => ({ check: w.loggedCheck }),
    control: requestToken,
  },
  "POST /ci/token": { body: () => ({ audience: "quire" }), control: requestToken },
  // Public: deliveries prove themselves by their signature, whatever Authorization says.
  "POST /webhook": {
    public: true,
    body: () => ({ id: "probe-event", type: "com.svc.authz.probe", data: {} }),
    headers: (w) => w.webhookSignature({ id: "probe-event", type: "com.svc.authz.probe", data: {} }),
  },
  "POST /claim": {
    control: { what: "the worker token", authorization: () => `Bearer ${authzEnv.SVC_CI_WORKER_TOKEN}` },
  },
  "POST /jobs/:id/heartbeat": { params: (w) => ({ id: w.jobs.job.id }), control: requestToken },
  // An invalid status, so that the control (a live token) is refused for its body, not completed.
  "POST /jobs/:id/complete": {
    params: (w) => ({ id: w.jobs.job.id }),
    body: () => ({ status: "probe" }),
    control: requestToken,
  },
  "GET /run/:id": { params: (w) => ({ id: w.jobs.job.id }) },
  // Public for its signed form; the ordinary form needs a signed-in caller.
  "GET /run/:id/logs/:check*": {
    public: true,
    params: (w) => ({ id: w.jobs.job.id, check: w.loggedCheck }),
    query: () => signedLogQuery,
    authenticatedQuery: "",
  },
  "POST /repos": { body: (w) => ({ owner: w.org, name: `${w.org}/${w.unique("probe-repo")}` }) },
  "GET /repos": {},
  "GET /repos/:repo*": {},
  "DELETE /repos/:repo*": {},

  // The web interface (docs/web.md): `/` redirects to it and its static files are public; the
  // pages take the same credentials as the API (form posts without fields answer 400, not 401).
  "GET /": { public: true, publicStatus: 302 },
  "GET /ui": {},
  "GET /ui/orgs/:org": {},
  "POST /ui/orgs": {},
  "POST /ui/orgs/:org/repos": {},
  // Development mode only (DEV_IDENTITIES): on this server there is no such page, whoever asks.
  "POST /ui/dev/identity": { public: true, publicStatus: 404 },
  "GET /ui/static/:hash/:name": {
    public: true,
    params: () => {
      const [, , , hash = "", name = ""] = styles.path.split("/");
      return { hash, name };
    },
  },
  "GET /ui/repos/:repo*": {},
  "GET /ui/repos/:repo*/-/tree": {},
  "GET /ui/repos/:repo*/-/tree/:path*": { params: () => ({ path: "docs" }) },
  "GET /ui/repos/:repo*/-/compare": { query: "?from=main&to=main" },
  "GET /ui/repos/:repo*/-/file/:path*": {},
  "GET /ui/repos/:repo*/-/raw/:path*": {},
  "GET /ui/repos/:repo*/-/plain/:path*": {},
  "GET /ui/repos/:repo*/-/history": {},
  "GET /ui/repos/:repo*/-/search": { query: "?q=hello" },
  "GET /ui/repos/:repo*/-/find": { query: "?q=md" },
  "GET /ui/repos/:repo*/-/commit/:sequence": {},
  "GET /ui/repos/:repo*/-/branches": {},
  "POST /ui/repos/:repo*/-/branches": {},
  "GET /ui/repos/:repo*/-/edit": {},
  "POST /ui/repos/:repo*/-/commit": {},
  "GET /ui/repos/:repo*/-/branch/:branch*": {},
  "POST /ui/repos/:repo*/-/branch/:branch*/review": {},
  "POST /ui/repos/:repo*/-/branch/:branch*/merge": {},
  "POST /ui/repos/:repo*/-/branch/:branch*/auto-merge": {},
  "GET /ui/repos/:repo*/-/issues": {},
  "POST /ui/repos/:repo*/-/issues": {},
  "GET /ui/repos/:repo*/-/issues/:number": { params: () => ({ number: "1" }) },
  "POST /ui/repos/:repo*/-/issues/:number/comments": { params: () => ({ number: "1" }) },
  "POST /ui/repos/:repo*/-/issues/:number/close": { params: () => ({ number: "1" }) },
  "POST /ui/repos/:repo*/-/issues/:number/reopen": { params: () => ({ number: "1" }) },
  "GET /ui/repos/:repo*/-/proposals": {},
  "GET /ui/repos/:repo*/-/proposals/:ref": { params: (w) => ({ ref: w.proposal }) },
  "POST /ui/repos/:repo*/-/proposals": {},
  "POST /ui/repos/:repo*/-/proposals/:id/edit": { params: (w) => ({ id: w.proposal }) },
  "POST /ui/repos/:repo*/-/proposals/:id/close": { params: (w) => ({ id: w.proposal }) },
  "GET /ui/repos/:repo*/-/releases": {},
  "GET /ui/repos/:repo*/-/members": {},
  "POST /ui/repos/:repo*/-/branch/:branch*/comment": {},
  "GET /ui/repos/:repo*/-/archive": {},
  "GET /ui/repos/:repo*/-/ci": {},
  "POST /ui/repos/:repo*/-/ci": {},
  "GET /ui/repos/:repo*/-/ci/:run": { params: (w) => ({ run: w.jobs.job.id }) },
  "GET /ui/repos/:repo*/-/ci/:run/log/:check*": {
    params: (w) => ({ run: w.jobs.job.id, check: w.loggedCheck }),
  },
  "GET /ui/repos/:repo*/-/ci/:run/raw/:check*": {
    params: (w) => ({ run: w.jobs.job.id, check: w.loggedCheck }),
  },
  "GET /ui/repos/:repo*/-/ci/:run/tail/:check*": {
    params: (w) => ({ run: w.jobs.job.id, check: w.loggedCheck }),
    query: "?after=0",
  },
  "GET /ui/repos/:repo*/-/ci/checks/:check*": { params: (w) => ({ check: w.loggedCheck }) },
  "POST /ui/repos/:repo*/-/members/roles": {},
  "POST /ui/repos/:repo*/-/members/org": {},
  "POST /ui/repos/:repo*/-/members/invites": {},
  "POST /ui/invites/:id/accept": {},
  "GET /ui/repos/:repo*/-/secrets": {},
  "POST /ui/repos/:repo*/-/secrets": {},
  "POST /ui/repos/:repo*/-/secrets/:secret/delete": { params: () => ({ secret: "PROBE" }) },
};

/** The real request of a route, against the shared fixtures. */
function callFor(method: Call["method"], pattern: string, probe: Probe, query = probe.query): Call {
  const path = concretePath(pattern, {
    org: world.org,
    repo: world.repo,
    branch: world.branch,
    identity: "member@authz.test",
    token: world.invite.token,
    id: world.invite.id,
    sequence: String(world.sequence),
    path: world.file,
    release_name: world.release,
    ...probe.params?.(world),
  });
  const q = typeof query === "function" ? query() : (query ?? "");
  return { method, path: path + q, body: probe.body?.(world) };
}

/** `callFor` with the probe's own headers (a webhook signature). */
async function fullCallFor(
  method: Call["method"],
  pattern: string,
  probe: Probe,
  query = probe.query,
): Promise<Call> {
  const call = callFor(method, pattern, probe, query);
  return probe.headers ? { ...call, headers: await probe.headers(world) } : call;
}

/**
 * Sends the route's request with this Authorization header value (none when undefined). An event
 * stream (the SSE routes) is never read: status and headers, then the request is aborted.
 */
function sendProbe(call: Call, authorization: string | undefined) {
  return sendRaw(app.url, call, authorization ? { authorization } : {});
}

/** Whether a route answers some form of request with no credentials: its access kind says so. */
const credentialFree = (route: AnyRoute) =>
  ["public", "presigned", "signedUrl"].includes(kindOf(route.access));

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
        expect(credentialFree(route)).toBe(true);
        for (const authorization of [undefined, "Basic x", "Bearer not-a-token"]) {
          const call = await fullCallFor(route.method, route.path, probe);
          const res = await sendProbe(call, authorization);
          expect(res.status, `${authorization}: ${JSON.stringify(res.body)}`).toBe(probe.publicStatus ?? 200);
        }
      });
      const authenticated = probe.authenticatedQuery;
      if (authenticated !== undefined)
        describe(`its authenticated form (${authenticated})`, () => {
          runCommonAuthTests(ctx, (authorization) =>
            sendProbe(callFor(route.method, route.path, probe, authenticated), authorization),
          );
        });
      return;
    }
    it("is not public in its route table", () => expect(credentialFree(route)).toBe(false));
    const control = probe.control;
    runCommonAuthTests(
      ctx,
      (authorization) => sendProbe(callFor(route.method, route.path, probe), authorization),
      control && { what: control.what, authorization: () => control.authorization(world) },
    );
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
    const publicRoutes = allRoutes.filter(credentialFree).map(routeKey);
    const publicProbes = Object.entries(probes)
      .filter(([, p]) => p.public)
      .map(([k]) => k);
    expect(publicProbes.sort()).toEqual(publicRoutes.sort());
  });
});
