import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { z } from "zod";
import type { RepoAccess, RepoRow } from "../access/roles.ts";
import { noFields } from "../api/strict.ts";
import type { Actor } from "../auth/actor.ts";
import type { AppContext } from "../context.ts";
import { isDatabaseUnavailable } from "../db/pool.ts";
import { DomainError, type ErrorCode, errorStatus, fail } from "../errors.ts";
import { repoGone, runInRepo } from "../repos/guard.ts";
import { admit } from "./access.ts";
import { refuseUnevaluatedPreconditions } from "./conditional.ts";
import { idempotently, principalOf } from "./idempotency.ts";
import {
  type DecodedContents,
  NO_DECODED,
  parseDecodingBase64,
  parseLiftingLongStrings,
} from "./large-json.ts";
import {
  matchPath,
  matchSegments,
  patternSegments,
  type RequestPath,
  requestPath,
  segmentsOf,
} from "./match.ts";
import { requireDeclaredReply } from "./responses.ts";
import type { AnyRoute, Reply } from "./route.ts";
import { type BadText, bodyText, findBadText, queryOf, refuseBadParams } from "./text.ts";

export interface RawRequest {
  method: string;
  /** Path and query string, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
  /**
   * The same body already parsed as JSON, when the functions framework has parsed it (see
   * `frameworkJson`, functions/index.ts): parsing it again would hold a second copy of a large
   * body, as a string and as an object, for as long as the request runs.
   */
  json?: unknown;
}

export interface Outcome {
  reply: Reply;
  actor: Actor | null;
  requestId: string;
  /** The error behind a 5xx reply, for the request log. */
  error?: unknown;
}

/** What every refusal carries: the request id, and `Allow` on a 405. */
function errorHeaders(err: DomainError, requestId: string): Record<string, string> {
  const headers: Record<string, string> = { "x-request-id": requestId };
  if (err.code === "METHOD_NOT_ALLOWED")
    headers["allow"] = ((err.details?.["allow"] ?? []) as string[]).join(", ");
  return headers;
}

/** A route's own error page, with the headers of every other refusal. */
function withErrorHeaders(reply: Reply | undefined, err: DomainError, requestId: string): Reply | undefined {
  return reply && { ...reply, headers: { ...reply.headers, ...errorHeaders(err, requestId) } };
}

/** The one error body: `{"code": "...", "error": "message"}` plus any spec-required details. */
export function errorReply(err: DomainError, requestId: string): Reply {
  const body = { code: err.code, error: err.message, ...err.details };
  return { status: err.status, body, headers: errorHeaders(err, requestId) };
}

function describeIssues(where: string, error: z.ZodError): string {
  return error.issues
    .flatMap((issue) => {
      const field = [where, ...issue.path.map(String)].join(".");
      // Every request schema is strict (docs/api.md): name each field or parameter refused.
      if (issue.code === "unrecognized_keys") {
        const what = where === "query" ? "query parameter" : "field";
        return issue.keys.slice(0, 10).map((key) => `${field}.${key.slice(0, 64)}: unknown ${what}`);
      }
      return [`${field}: ${issue.message}`];
    })
    .join("; ");
}

/** A schema may tag a custom issue with a more precise code, as `params: { code: "INVALID_PATH" }`. */
function codeOf(issue: z.core.$ZodIssue | undefined): ErrorCode {
  const tagged = issue?.code === "custom" ? (issue.params as { code?: string } | undefined)?.code : undefined;
  return tagged && tagged in errorStatus ? (tagged as ErrorCode) : "VALIDATION_FAILED";
}

function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  const bad = findBadText(value, where);
  if (bad) refuseBadText(bad, where, parsed.error);
  if (!parsed.success) fail(codeOf(parsed.error.issues[0]), describeIssues(where, parsed.error));
  return parsed.data;
}

/**
 * Refuses text PostgreSQL cannot store (shared/http/text.ts) with 400 naming its field, whatever
 * else is wrong with the input: with the schema's own code and words when the schema refuses that
 * very field too (a NUL in a file path is INVALID_PATH), VALIDATION_FAILED otherwise.
 */
function refuseBadText(bad: BadText, where: string, error: z.ZodError | undefined): never {
  // An unknown key that holds bad text is refused for its text: that is what the caller must fix.
  const same = error?.issues.find(
    (i) => i.code !== "unrecognized_keys" && [where, ...i.path.map(String)].join(".") === bad.path,
  );
  if (same) fail(codeOf(same), `${bad.path}: ${same.message}`);
  fail("VALIDATION_FAILED", `${bad.path}: ${bad.problem}`);
}

/**
 * The path parameters, parsed. A name holding text PostgreSQL cannot store answers 404 as a missing
 * resource (refuseBadParams), unless the parameter's own rule refuses it: then that rule's 400.
 */
function parsePathParams(route: AnyRoute, params: Record<string, string>): unknown {
  const parsed = (route.params as z.ZodType | undefined)?.safeParse(params);
  const refused = parsed?.error?.issues.map((i) => String(i.path[0]));
  refuseBadParams(params, new Set(refused));
  return route.params ? parseWith(route.params, params, "path") : params;
}

/** Above this size a body is decoded, parsed and checked in separate turns of the event loop. */
const YIELD_ABOVE_BYTES = 1_048_576;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A parsed body, with the base64 values decoded as it was parsed (large-json.ts). */
interface ParsedBody {
  value: unknown;
  decoded: DecodedContents;
}

/**
 * The body as JSON; one that is not UTF-8 is refused, not read with U+FFFD in place of its bad
 * bytes. Parsing a 27 MiB commit body takes a sizeable fraction of a second, so a large body gives
 * other requests a turn after it. A large body is parsed without its whole text (large-json.ts),
 * and its long base64 values under `base64Fields` are decoded in its own bytes.
 */
async function parseJsonBody(
  body: Buffer | undefined,
  json: unknown,
  base64Fields: readonly string[] | undefined,
): Promise<ParsedBody> {
  if (body === undefined || body.length === 0) return { value: undefined, decoded: NO_DECODED };
  if (json !== undefined) {
    // The framework read bad bytes as U+FFFD; Quire refuses them, and checking needs no copy.
    if (!isUtf8(body)) throw new DomainError("MALFORMED_JSON", "the request body is not valid UTF-8");
    return { value: json, decoded: NO_DECODED };
  }
  const large = body.length > YIELD_ABOVE_BYTES;
  let parsed: ParsedBody;
  try {
    // A large body's long strings (file contents) are read from its bytes, not from its whole text.
    if (!large) parsed = { value: JSON.parse(bodyText(body)), decoded: NO_DECODED };
    else if (base64Fields) parsed = await parseDecodingBase64(body, new Set(base64Fields));
    else parsed = { value: parseLiftingLongStrings(body), decoded: NO_DECODED };
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new DomainError("MALFORMED_JSON", `the request body is not valid JSON: ${(err as Error).message}`);
  }
  if (large) await nextTurn();
  return parsed;
}

/** A route with what matching needs of its pattern, worked out once per table. */
interface IndexedRoute {
  route: AnyRoute;
  pattern: string[];
  /** How literal the pattern is: `/branch/:branch*\/status` (3) beats `/branch/:branch*` (2). */
  rank: number;
  /** Its place in the table. */
  order: number;
}

/**
 * A table's routes by what a path must hold for them to match: its first segment, and for a repo's
 * routes (`/repos/:repo*\/-/tree`) the segment after the first `-` (a repo's name never holds
 * one, so that `-` is the pattern's). A request is matched against a handful of patterns instead
 * of every repo route, each of which tried every split of the path. Each list is merged and put in
 * table order when the index is built, so a request only looks its list up.
 */
interface RouteIndex {
  /** Patterns that start with a parameter, or are empty: any path may match them. */
  anyFirst: IndexedRoute[];
  /** By first segment: the routes of a path by the segment after its first `-`, else `unkeyed`. */
  byFirst: Map<string, { keyed: Map<string, IndexedRoute[]>; unkeyed: IndexedRoute[] }>;
}

const indexes = new WeakMap<readonly AnyRoute[], RouteIndex>();

function indexOf(routes: readonly AnyRoute[]): RouteIndex {
  let index = indexes.get(routes);
  if (index === undefined) {
    index = buildIndex(routes);
    indexes.set(routes, index);
  }
  return index;
}

function buildIndex(routes: readonly AnyRoute[]): RouteIndex {
  const anyFirst: IndexedRoute[] = [];
  const buckets = new Map<string, { afterDash: Map<string, IndexedRoute[]>; rest: IndexedRoute[] }>();
  for (const [order, route] of routes.entries()) {
    const pattern = patternSegments(route.path);
    const entry = { route, pattern, rank: pattern.filter((s) => !s.startsWith(":")).length, order };
    const [first, repo, dash, next] = pattern;
    if (first === undefined || first.startsWith(":")) {
      anyFirst.push(entry);
      continue;
    }
    let bucket = buckets.get(first);
    if (bucket === undefined) {
      bucket = { afterDash: new Map(), rest: [] };
      buckets.set(first, bucket);
    }
    const keyed =
      repo?.startsWith(":") && repo.endsWith("*") && dash === "-" && next && !next.startsWith(":");
    if (keyed) bucket.afterDash.set(next, [...(bucket.afterDash.get(next) ?? []), entry]);
    else bucket.rest.push(entry);
  }
  const inOrder = (...lists: IndexedRoute[][]) => lists.flat().sort((a, b) => a.order - b.order);
  const byFirst: RouteIndex["byFirst"] = new Map();
  for (const [first, { afterDash, rest }] of buckets) {
    const keyed = new Map([...afterDash].map(([key, list]) => [key, inOrder(anyFirst, rest, list)]));
    byFirst.set(first, { keyed, unkeyed: inOrder(anyFirst, rest) });
  }
  return { anyFirst, byFirst };
}

/** The routes `path` may match, in table order. */
function routesFor(index: RouteIndex, path: RequestPath): IndexedRoute[] {
  const bucket = index.byFirst.get(path.raw[0] ?? "");
  if (bucket === undefined) return index.anyFirst;
  const dash = path.raw.indexOf("-", 2);
  return (dash < 0 ? undefined : bucket.keyed.get(path.raw[dash + 1] ?? "")) ?? bucket.unkeyed;
}

/**
 * The route for a request. When patterns of several routes match a path, the most literal one
 * decides what the path means, whatever the order of the tables: `/branch/x/status` is the status
 * of `x`, not a branch named `x/status` (which a client writes as `x%2Fstatus`).
 */
export function findRoute(routes: readonly AnyRoute[], method: string, pathname: string) {
  const path = requestPath(pathname);
  const matches = routesFor(indexOf(routes), path).flatMap(({ route, pattern, rank }) => {
    const params = matchSegments(pattern, path);
    return params ? [{ route, params, rank }] : [];
  });
  const best = Math.max(...matches.map((m) => m.rank));
  const candidates = matches.filter((m) => m.rank === best);
  const found = candidates.find(
    (m) => m.route.method === method || (method === "HEAD" && answersHead(m.route)),
  );
  if (found) return found;
  const allowed = new Set<string>(candidates.map((m) => m.route.method));
  if (candidates.some((m) => answersHead(m.route))) allowed.add("HEAD");
  if (allowed.size > 0) {
    const allow = [...allowed].sort().join(", ");
    throw new DomainError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use ${allow}`, {
      details: { allow: [...allowed].sort() },
    });
  }
  fail("NOT_FOUND", `no route for ${method} ${pathname}`);
}

/** A page's GET answers HEAD as well: the same status and headers; node sends no body for HEAD. */
const answersHead = (route: AnyRoute) => route.method === "GET" && route.section?.answersHead === true;

/**
 * The route whose section holds a path no route takes with this method: one with a `section`
 * whose pattern matches the path (`POST /`), else one with the same literal first segment (a
 * mistyped page under `/ui/`). Paths elsewhere keep the API's JSON refusal.
 */
function sectionOf(routes: readonly AnyRoute[], pathname: string): AnyRoute | undefined {
  const sectioned = routes.filter((r) => r.section !== undefined);
  const same = sectioned.find((r) => matchPath(r.path, pathname) !== null);
  if (same) return same;
  const first = segmentsOf(pathname)[0];
  if (first === undefined || first === "") return undefined;
  return sectioned.find((r) => segmentsOf(r.path)[0] === first);
}

/**
 * A refusal that arose before any route ran (the body too large to read): shown as the section
 * of its path shows refusals, else the one JSON error.
 */
export function refusalOutsideRoutes(
  routes: readonly AnyRoute[],
  raw: Pick<RawRequest, "url" | "headers">,
  err: DomainError,
  requestId: string,
): Reply {
  const section = sectionOf(routes, pathOf(raw.url));
  const page = section?.errorPage?.(err, { actor: null, headers: raw.headers, path: pathOf(raw.url) });
  return inSection(section, withErrorHeaders(page, err, requestId) ?? errorReply(err, requestId));
}

/** The reply with its section's headers under its own. */
function inSection(route: AnyRoute | undefined, reply: Reply): Reply {
  if (!route?.section) return reply;
  return { ...reply, headers: { ...route.section.headers, ...reply.headers } } as Reply;
}

/**
 * Builds the request handler for a route table: match, check the caller's credentials, validate
 * every input with the route's zod schemas, grant the access the route declares (the table in
 * `ctx.access`, shared/http/access.ts), run the handler, and render any error in the one error
 * shape. A mutation with an `Idempotency-Key` runs everything after the credentials at most once
 * per key and caller (./idempotency.ts). Nothing escapes to the framework's crash handler: an
 * unexpected error becomes a 500 whose
 * body says only "internal error" and whose cause goes to the log.
 */
export function createDispatcher(ctx: AppContext, routes: readonly AnyRoute[]) {
  return async function dispatch(raw: RawRequest): Promise<Outcome> {
    const requestId = headerValue(raw.headers["x-request-id"]) ?? randomUUID();
    let actor: Actor | null = null;
    let matched: AnyRoute | undefined;
    let workedIn: RepoRow | undefined;
    try {
      const url = new URL(raw.url, "http://quire.invalid");
      const { route, params } = findRoute(routes, raw.method.toUpperCase(), url.pathname);
      matched = route;
      const admission = await admit({
        ctx,
        route,
        headers: raw.headers,
        params,
        query: url.searchParams,
        body: raw.body,
      });
      actor = admission.actor;
      const principal = admission.principal ?? principalOf({ actor });
      const refuse = (err: DomainError) => errorReply(err, requestId);
      const reply = await idempotently(ctx, { ...raw, principal, refuse }, async () => {
        // Text PostgreSQL cannot store (NUL, lone surrogates) is refused here (parseWith, refuseBadParams).
        // A route without a query schema takes no parameters: any is refused, as in a strict schema.
        refuseUnevaluatedPreconditions(route.method, raw.headers, route.etag === "branch-head");
        const query = parseWith(route.query ?? noFields, queryOf(url.search), "query");
        const pathParams = parsePathParams(route, params);
        const parsed = route.body
          ? await parseJsonBody(raw.body, raw.json, route.base64Fields)
          : { value: undefined, decoded: NO_DECODED };
        const body = route.body ? parseWith(route.body, parsed.value ?? {}, "body") : undefined;
        const granted = (await admission.grant()) as { repo?: RepoAccess };
        workedIn = granted.repo?.repo;
        const log = ctx.log.child({ request_id: requestId });
        const handle = () =>
          route.handler({
            ctx,
            params: pathParams,
            query,
            body,
            requestId,
            log,
            headers: raw.headers,
            rawBody: raw.body,
            decoded: parsed.decoded,
            ...granted,
          } as Parameters<AnyRoute["handler"]>[0]);
        const answer = workedIn ? await runInRepo(workedIn, handle) : await handle();
        if (ctx.config.SVC_CHECK_RESPONSES) requireDeclaredReply(route, answer);
        return answer;
      });
      reply.headers = { ...reply.headers, "x-request-id": requestId };
      return { reply: inSection(matched, reply), actor, requestId };
    } catch (caught) {
      matched ??= sectionOf(routes, pathOf(raw.url));
      const err = await repoGoneInstead(ctx, workedIn, caught);
      if (err instanceof DomainError) {
        const reply =
          (err.code === "UNAUTHENTICATED" && signInRedirect(raw, requestId)) ||
          withErrorHeaders(
            matched?.errorPage?.(err, { actor, headers: raw.headers, path: pathOf(raw.url) }),
            err,
            requestId,
          ) ||
          errorReply(err, requestId);
        const out: Outcome = { reply: inSection(matched, reply), actor, requestId };
        if (err.status >= 500) out.error = err.cause ?? err;
        return out;
      }
      const fault = isDatabaseUnavailable(err)
        ? new DomainError("UNAVAILABLE", "the database is not available; try again")
        : new DomainError("INTERNAL", "internal error");
      return { reply: inSection(matched, errorReply(fault, requestId)), actor, requestId, error: err };
    }
  };
}

/**
 * A request whose repo was deleted while it ran lost a race: whatever it failed on (a foreign key
 * that no longer holds, a branch that went with the repo), the answer is 404 REPO_NOT_FOUND, as a
 * retry would get. Other errors are kept as they are.
 */
async function repoGoneInstead(ctx: AppContext, repo: RepoRow | undefined, err: unknown): Promise<unknown> {
  if (repo === undefined || (err instanceof DomainError && err.code === "REPO_NOT_FOUND")) return err;
  try {
    if (await repoGone(ctx.pool, repo.id))
      return new DomainError("REPO_NOT_FOUND", `repo '${repo.name}' not found`);
  } catch {
    // The database is unreachable: the original error says more.
  }
  return err;
}

/**
 * A browser's page request (a GET that accepts HTML) that needs sign-in is sent to /auth/login,
 * which brings it back here afterwards; API clients keep their 401 JSON.
 */
function signInRedirect(raw: RawRequest, requestId: string): Reply | null {
  const method = raw.method.toUpperCase();
  const accept = String(raw.headers.accept ?? "");
  if ((method !== "GET" && method !== "HEAD") || !/(^|[\s,])text\/html\b/i.test(accept)) return null;
  return {
    status: 302,
    headers: {
      location: `/auth/login?return_to=${encodeURIComponent(raw.url)}`,
      "cache-control": "no-store",
      "x-request-id": requestId,
    },
  };
}

/** The path of a request URL as sent; one that does not parse has none. */
function pathOf(url: string): string {
  try {
    return new URL(url, "http://quire.invalid").pathname;
  } catch {
    return "/";
  }
}

function headerValue(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && /^[\w.:-]{1,128}$/.test(s) ? s : undefined;
}
