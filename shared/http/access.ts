import type { IncomingHttpHeaders } from "node:http";
import { z } from "zod";
import { type ReadAhead, type RepoAccess, type Role, requireRepoRole } from "../access/roles.ts";
import { sequenceParam } from "../api/names.ts";
import { verifyArchiveSignature } from "../archives/presign.ts";
import type { Actor } from "../auth/actor.ts";
import { isSafeMethod, requireCsrfProtection } from "../auth/csrf.ts";
import { requireClaimedJob } from "../ci/jobs/request-token.ts";
import type { AppContext } from "../context.ts";
import { fail } from "../errors.ts";
import { findRepoByName } from "../repos/repos.ts";
import { principalOf } from "./idempotency.ts";
import {
  type AccessKind,
  type AnyRoute,
  type GrantedByKind,
  type InternalCaller,
  kindOf,
  type SignatureCheck,
} from "./route.ts";

/** What an access check sees of a request: the matched route, headers, path parameters and query. */
export interface AccessRequest {
  ctx: AppContext;
  route: AnyRoute;
  headers: IncomingHttpHeaders;
  /** The path parameters as matched; validated by the route's schema before `grant` runs. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The body as received: a form post carries its CSRF token there (shared/auth/csrf.ts). */
  body?: Buffer | undefined;
}

/**
 * An access check in two steps. The first checks credentials before the input is validated, so a
 * caller without any gets 401 whatever it sent; `grant` finishes once the input is valid (a repo
 * lookup, a URL signature), so a bad request gets 400 before anything is looked up.
 */
export interface Admission<G> {
  /** The signed-in caller, if any, for the request log. */
  actor: Actor | null;
  /**
   * Who the caller is when it is not a signed-in actor (a CI job's request token, a worker), for
   * keys that belong to a caller (Idempotency-Key, shared/http/idempotency.ts).
   */
  principal?: string | undefined;
  grant: () => Promise<G>;
}

export type Resolver<G> = (req: AccessRequest) => Promise<Admission<G>>;

/** One resolver for each kind of access: the dispatcher knows no other rule. */
export type AccessTable = { [K in AccessKind]: Resolver<GrantedByKind[K]> };

/**
 * Proves that a call to an `internal` route comes from Cloud Tasks or Cloud Scheduler: the
 * Google-signed OIDC token verifier of shared/auth/internal.ts when SVC_INTERNAL_INVOKERS is set,
 * else `trustNetwork` (the platform lets only their service accounts invoke those functions).
 */
export type InternalVerifier = (headers: IncomingHttpHeaders, route: AnyRoute) => Promise<InternalCaller>;

export const trustNetwork: InternalVerifier = async () => ({ principal: null });

const granted = <G>(actor: Actor | null, value: G): Admission<G> => ({ actor, grant: async () => value });

/** Plain `npm start` has no identity provider: say how to try Quire without one. */
const noProviderHint =
  " (no identity provider is configured for sign-in here: for local development, start with DEV_IDENTITY=you@example.com npm start)";

/**
 * The signed-in caller. One signed in with the session cookie has the same roles as with a bearer
 * token, and a mutation of theirs must also pass the CSRF checks (shared/auth/csrf.ts).
 */
async function signedIn(req: AccessRequest, hint = ""): Promise<Actor> {
  const actor = await req.ctx.auth.authenticate(req.headers, req.ctx);
  if (!actor)
    fail(
      "UNAUTHENTICATED",
      `sign in: send 'Authorization: Bearer <ID token>'${hint}, or sign in at /auth/login${req.ctx.config.OIDC_CLIENT_ID ? "" : noProviderHint}`,
    );
  if (actor.session && !isSafeMethod(req.route.method))
    requireCsrfProtection(req.ctx, { headers: req.headers, body: req.body }, actor.session.csrfToken);
  return actor;
}

/**
 * What a CI job may do with its job token (`actor.job`), decided here and nowhere else: read its
 * own repo (`GET` routes that need `reader`; `findRepoAccess` makes it a reader of that repo only,
 * so any other repo answers 404 as if absent) and call the routes flagged `jobToken: "report"`
 * (posting check runs) there. Anything else is 403, whatever repo it names.
 */
function jobTokenGate(route: AnyRoute): void {
  const repoRole = typeof route.access === "object" && "repo" in route.access ? route.access.repo : null;
  const read = route.method === "GET" && repoRole === "reader";
  const report = route.jobToken === "report" && repoRole !== null;
  if (!read && !report) fail("FORBIDDEN", "a CI job token may only read its repo and report check runs");
}

/**
 * The repo of a repo route and the caller's role on it. On a `jobToken: "report"` route a job acts
 * with the role the route needs, on its own repo only (anywhere else it is no reader: 404); what
 * it may report there is the operation's rule.
 */
async function repoAccess(req: AccessRequest, actor: Actor, need: Role): Promise<RepoAccess> {
  const { ctx } = req;
  const name = repoParam(req);
  if (!actor.job) return requireRepoRole(ctx.pool, name, actor, need, branchOfRead(req));
  if (need === "reader") return requireRepoRole(ctx.pool, name, actor, need);
  const access = await requireRepoRole(ctx.pool, name, actor, "reader");
  return { ...access, role: need };
}

const repoParam = (req: AccessRequest) => req.params["repo"] ?? "";

/**
 * The branch a read of a repo is at (`?branch=`, else main), which the access statement then reads
 * as well: most reads resolve a view of it next, and this saves them that round trip. Only GET
 * routes; a route that reads no branch pays one more index probe in the same statement. A route
 * with `prefetch: "file"` has its `:path` file read there too.
 */
function branchOfRead(req: AccessRequest): ReadAhead | undefined {
  if (req.route.method !== "GET") return undefined;
  const branch = req.query.get("branch") ?? "main";
  const path = req.params["path"];
  if (req.route.prefetch !== "file" || path === undefined) return { branch };
  // The query is valid by now (grant runs after validation): `at` is a sequence when present.
  const at = req.query.get("at");
  return { branch, file: { path, at: at === null ? undefined : Number(at) } };
}

const unixSeconds = z
  .string()
  .regex(/^\d{1,15}$/, "must be a Unix time in seconds")
  .transform(Number);

const presignedFields = z.object({
  branch: z.string().optional(),
  at: sequenceParam.optional(),
  expires: unixSeconds.optional(),
  sig: z.string().optional(),
});

/**
 * The presigned form of an archive URL: the signature (over the repo name as given) is checked
 * before the repo is looked up, so a forged URL gets 403 SIGNATURE_INVALID whether or not the repo
 * exists. Only a genuinely signed URL whose repo has since been deleted learns REPO_NOT_FOUND.
 */
async function presignedRepo(req: AccessRequest) {
  const name = repoParam(req);
  const q = presignedFields.parse(Object.fromEntries(req.query));
  if (q.sig === undefined || q.expires === undefined || q.branch === undefined || q.at === undefined) {
    const missing = (["branch", "at", "expires", "sig"] as const).filter((k) => q[k] === undefined);
    fail(
      "VALIDATION_FAILED",
      `a presigned archive URL needs branch, at, expires and sig; missing: ${missing.join(", ")}`,
    );
  }
  await verifyArchiveSignature(req.ctx, {
    repo: name,
    branch: q.branch,
    sequence: q.at,
    expires: q.expires,
    sig: q.sig,
  });
  const repo = await findRepoByName(req.ctx.pool, name);
  if (!repo) fail("REPO_NOT_FOUND", `repo '${name}' not found`);
  return repo;
}

const isSigned = (query: URLSearchParams) => query.has("sig") || query.has("expires");

/** The signature fields of a URL signed with the server's key. */
async function urlSignature(req: AccessRequest, check: SignatureCheck): Promise<void> {
  const sig = req.query.get("sig");
  const expires = req.query.get("expires");
  if (sig === null || expires === null) fail("VALIDATION_FAILED", "a signed URL needs both expires and sig");
  await check(req.ctx, req.params, { sig, expires: unixSeconds.parse(expires) });
}

/** The access table of the service; `verifyInternal` proves the callers of `internal` routes. */
export function createAccessTable(opts: { verifyInternal?: InternalVerifier } = {}): AccessTable {
  const verifyInternal = opts.verifyInternal ?? trustNetwork;
  return {
    public: async () => granted(null, {}),
    user: async (req) => {
      const actor = await signedIn(req);
      if (actor.job) jobTokenGate(req.route);
      return granted(actor, { actor });
    },
    repo: async (req) => {
      const actor = await signedIn(req);
      if (actor.job) jobTokenGate(req.route);
      const need = (req.route.access as { repo: Role }).repo;
      return {
        actor,
        grant: async () => ({ actor, repo: await repoAccess(req, actor, need) }),
      };
    },
    presigned: async (req) => {
      if (isSigned(req.query))
        return { actor: null, grant: async () => ({ actor: null, repoRow: await presignedRepo(req) }) };
      const actor = await signedIn(req, ", or use a presigned URL");
      if (actor.job) jobTokenGate(req.route);
      return {
        actor,
        grant: async () => ({
          actor,
          repoRow: (await requireRepoRole(req.ctx.pool, repoParam(req), actor, "reader")).repo,
        }),
      };
    },
    signedUrl: async (req) => {
      const check = (req.route.access as { signedUrl: SignatureCheck }).signedUrl;
      if (isSigned(req.query))
        return {
          actor: null,
          grant: async () => {
            await urlSignature(req, check);
            return { actor: null };
          },
        };
      const actor = await signedIn(req);
      if (actor.job) jobTokenGate(req.route);
      return granted(actor, { actor });
    },
    requestToken: async (req) => {
      const job = await requireClaimedJob(req.ctx.pool, req.headers);
      return { ...granted(null, { job }), principal: principalOf({ job }) };
    },
    worker: async (req) => {
      const worker = await req.ctx.ciWorkers.verify(req.headers.authorization);
      return { ...granted(null, { worker }), principal: principalOf({ worker }) };
    },
    internal: async (req) => granted(null, { internal: await verifyInternal(req.headers, req.route) }),
  };
}

/** Runs the first step of the access check a route declares. */
export function admit(req: AccessRequest): Promise<Admission<unknown>> {
  const resolve = req.ctx.access[kindOf(req.route.access)] as Resolver<unknown>;
  return resolve(req);
}
