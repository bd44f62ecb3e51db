import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { z } from "zod";
import { type RepoAccess, type Role, requireRepoRole } from "../access/roles.ts";
import type { Actor, JobActor } from "../auth/actor.ts";
import { requireClaimedJob } from "../ci/jobs/request-token.ts";
import type { AppContext } from "../context.ts";
import { isDatabaseUnavailable } from "../db/pool.ts";
import { DomainError, type ErrorCode, errorStatus, fail } from "../errors.ts";
import { matchPath, segmentsOf } from "./match.ts";
import type { AnyRoute, Reply } from "./route.ts";

export interface RawRequest {
  method: string;
  /** Path and query string, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
}

export interface Outcome {
  reply: Reply;
  actor: Actor | null;
  requestId: string;
  /** The error behind a 5xx reply, for the request log. */
  error?: unknown;
}

/** The one error body: `{"code": "...", "error": "message"}` plus any spec-required details. */
export function errorReply(err: DomainError, requestId: string): Reply {
  const headers: Record<string, string> = { "x-request-id": requestId };
  if (err.code === "METHOD_NOT_ALLOWED")
    headers["allow"] = ((err.details?.["allow"] ?? []) as string[]).join(", ");
  return { status: err.status, body: { code: err.code, error: err.message, ...err.details }, headers };
}

function describeIssues(where: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = [where, ...issue.path.map(String)].join(".");
      return `${field}: ${issue.message}`;
    })
    .join("; ");
}

/** A schema may tag a custom issue with a more precise code, as `params: { code: "INVALID_PATH" }`. */
function codeOf(error: z.ZodError): ErrorCode {
  const first = error.issues[0];
  const tagged = first?.code === "custom" ? (first.params as { code?: string } | undefined)?.code : undefined;
  return tagged && tagged in errorStatus ? (tagged as ErrorCode) : "VALIDATION_FAILED";
}

function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) fail(codeOf(parsed.error), describeIssues(where, parsed.error));
  return parsed.data;
}

function parseJsonBody(body: Buffer | undefined): unknown {
  if (body === undefined || body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw new DomainError("MALFORMED_JSON", `the request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** How literal a pattern is: `/branch/:branch*\/status` (3) beats `/branch/:branch*` (2). */
const literalSegments = (pattern: string) => segmentsOf(pattern).filter((s) => !s.startsWith(":")).length;

/**
 * The route for a request. When patterns of several routes match a path, the most literal one
 * decides what the path means, whatever the order of the tables: `/branch/x/status` is the status
 * of `x`, not a branch named `x/status` (which a client writes as `x%2Fstatus`).
 */
function findRoute(routes: readonly AnyRoute[], method: string, pathname: string) {
  const matches = routes.flatMap((route) => {
    const params = matchPath(route.path, pathname);
    return params ? [{ route, params, rank: literalSegments(route.path) }] : [];
  });
  const best = Math.max(...matches.map((m) => m.rank));
  const candidates = matches.filter((m) => m.rank === best);
  const found = candidates.find((m) => m.route.method === method);
  if (found) return found;
  const allowed = new Set(candidates.map((m) => m.route.method));
  if (allowed.size > 0) {
    const allow = [...allowed].sort().join(", ");
    throw new DomainError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use ${allow}`, {
      details: { allow: [...allowed].sort() },
    });
  }
  fail("NOT_FOUND", `no route for ${method} ${pathname}`);
}

/**
 * Builds the request handler for a route table: match, authenticate, validate every input with the
 * route's zod schemas, resolve repo access, run the handler, and render any error in the one error
 * shape. Nothing escapes to the framework's crash handler: an unexpected error becomes a 500 whose
 * body says only "internal error" and whose cause goes to the log.
 */
export function createDispatcher(ctx: AppContext, routes: readonly AnyRoute[]) {
  return async function dispatch(raw: RawRequest): Promise<Outcome> {
    const requestId = headerValue(raw.headers["x-request-id"]) ?? randomUUID();
    let actor: Actor | null = null;
    try {
      const url = new URL(raw.url, "http://quire.invalid");
      const { route, params } = findRoute(routes, raw.method.toUpperCase(), url.pathname);
      const { job, worker } = await nonPersonCaller(ctx, route, raw.headers);
      if (route.access === "user" || typeof route.access === "object") {
        actor = await ctx.auth.authenticate(raw.headers, ctx);
        if (!actor) fail("UNAUTHENTICATED", "sign in: send 'Authorization: Bearer <ID token>'");
        if (actor.job) jobTokenGate(route);
      }
      const query = route.query
        ? parseWith(route.query, Object.fromEntries(url.searchParams), "query")
        : undefined;
      const pathParams = route.params ? parseWith(route.params, params, "path") : params;
      const parsedBody = route.body
        ? parseWith(route.body, parseJsonBody(raw.body) ?? {}, "body")
        : undefined;
      const repo =
        typeof route.access === "object"
          ? await repoAccess(ctx, params["repo"]!, actor!, route.access.repo)
          : undefined;
      const body =
        actor?.job && route.jobToken === "report" ? jobReportBody(actor.job, parsedBody) : parsedBody;
      const log = ctx.log.child({ request_id: requestId });
      const reply = await route.handler({
        ctx,
        actor,
        params: pathParams,
        query,
        body,
        repo,
        requestId,
        log,
        headers: raw.headers,
        rawBody: raw.body,
        job,
        worker,
      });
      reply.headers = { ...reply.headers, "x-request-id": requestId };
      return { reply, actor, requestId };
    } catch (err) {
      if (err instanceof DomainError) {
        const out: Outcome = { reply: errorReply(err, requestId), actor, requestId };
        if (err.status >= 500) out.error = err.cause ?? err;
        return out;
      }
      const fault = isDatabaseUnavailable(err)
        ? new DomainError("UNAVAILABLE", "the database is not available; try again")
        : new DomainError("INTERNAL", "internal error");
      return { reply: errorReply(fault, requestId), actor, requestId, error: err };
    }
  };
}

/**
 * What a CI job may do with its job token (`actor.job`), decided here and nowhere else: read its
 * own repo (`GET` routes that need `reader`; `findRepoAccess` makes it a reader of that repo only,
 * so any other repo answers 404 as if absent) and call the routes flagged `jobToken: "report"`
 * (posting check runs) there. Anything else is 403, whatever repo it names.
 */
function jobTokenGate(route: AnyRoute): void {
  const read = route.method === "GET" && typeof route.access === "object" && route.access.repo === "reader";
  const report = route.jobToken === "report" && typeof route.access === "object";
  if (!read && !report) fail("FORBIDDEN", "a CI job token may only read its repo and report check runs");
}

/**
 * The repo of a repo route and the caller's role on it. On a `jobToken: "report"` route a job acts
 * with the role the route needs, on its own repo only (anywhere else it is no reader: 404).
 */
async function repoAccess(ctx: AppContext, name: string, actor: Actor, need: Role): Promise<RepoAccess> {
  if (!actor.job || need === "reader") return requireRepoRole(ctx.pool, name, actor, need);
  const access = await requireRepoRole(ctx.pool, name, actor, "reader");
  return { ...access, role: need };
}

/**
 * The body of a report by a CI job: about what the job tested, so only on its job's branch and
 * at its pinned sequence (the default); a job's verdict on any other state would be a claim about
 * something it never ran.
 */
function jobReportBody(job: JobActor, body: unknown): unknown {
  const b = (body ?? {}) as { branch?: unknown; sequence?: unknown };
  if (b.branch !== job.branch)
    fail("FORBIDDEN", `a CI job token may only report on its job's branch '${job.branch}'`);
  if (b.sequence !== undefined && b.sequence !== job.sequence)
    fail("FORBIDDEN", `a CI job token may only report at its job's sequence ${job.sequence}`);
  return { ...b, sequence: job.sequence };
}

/** The CI job (request token) or CI worker a route of that access is called by. */
async function nonPersonCaller(ctx: AppContext, route: AnyRoute, headers: IncomingHttpHeaders) {
  if (route.access === "requestToken") return { job: await requireClaimedJob(ctx.pool, headers) };
  if (route.access === "worker") return { worker: await ctx.ciWorkers.verify(headers.authorization) };
  return {};
}

function headerValue(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && /^[\w.:-]{1,128}$/.test(s) ? s : undefined;
}
