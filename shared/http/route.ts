import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { z } from "zod";
import type { RepoAccess, RepoRow, Role } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { JobRow } from "../ci/jobs/records.ts";
import type { WorkerIdentity } from "../ci/worker/index.ts";
import type { AppContext } from "../context.ts";
import type { DomainError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { DecodedContents } from "./large-json.ts";
import type { Responses } from "./responses.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What a URL signed with the server's key carries (`?expires=&sig=`). */
export interface UrlSignature {
  sig: string;
  /** Unix time in seconds. */
  expires: number;
}

/**
 * Checks the signature of a signed URL against what the route's URL names (its validated path
 * parameters): SIGNATURE_INVALID or URL_EXPIRED when it does not hold.
 */
export type SignatureCheck = (
  ctx: AppContext,
  params: Readonly<Record<string, string>>,
  signature: UrlSignature,
) => Promise<void>;

/**
 * Who may call a route; the dispatcher checks it (with the table in `ctx.access`,
 * shared/http/access.ts) before the handler runs, and the handler's call carries what it proved
 * (`Granted`):
 * - `public`: no credentials.
 * - `user`: any signed-in identity (`call.actor`); the operation checks the rest, e.g. org ownership.
 * - `{ repo: role }`: a signed-in caller with at least that role on the `:repo` parameter's repo
 *   (`call.actor`, `call.repo`); a repo the caller may not read answers 404.
 * - `{ repo: "reader", orPresigned: true }`: a reader, or a presigned archive URL (`sig`,
 *   `expires`, `branch`, `at`) with no credentials (`call.actor` is null then; `call.repoRow`).
 * - `{ signedUrl: check }`: a signed-in caller (`call.actor`), or a URL signed with the server's
 *   key (`expires`, `sig`) that `check` accepts, with no credentials (`call.actor` is null then).
 * - `requestToken`: a CI job's request token that holds a claim now (`call.job`).
 * - `worker`: a CI worker's identity at claim (`call.worker`).
 * - `internal`: Cloud Tasks or Cloud Scheduler (`call.internal`); how it is proved is the
 *   context's verifier (shared/http/access.ts).
 */
export type Access =
  | "public"
  | "user"
  | { repo: Role }
  | { repo: "reader"; orPresigned: true }
  | { signedUrl: SignatureCheck }
  | "requestToken"
  | "worker"
  | "internal";

/** Who called an `internal` route, as the context's verifier found it. */
export interface InternalCaller {
  /** The service account behind a verified token, or null where the network alone is trusted. */
  principal: string | null;
}

/** What each kind of access proves about the caller: the parts of the handler's call it adds. */
export interface GrantedByKind {
  public: Record<never, never>;
  user: { actor: Actor };
  repo: { actor: Actor; repo: RepoAccess };
  presigned: { actor: Actor | null; repoRow: RepoRow };
  signedUrl: { actor: Actor | null };
  requestToken: { job: JobRow };
  worker: { worker: WorkerIdentity };
  internal: { internal: InternalCaller };
}
export type AccessKind = keyof GrantedByKind;

/** The kind of an access declaration, as the type system sees it. */
export type KindOf<A extends Access> = A extends string
  ? A
  : A extends { orPresigned: true }
    ? "presigned"
    : A extends { signedUrl: SignatureCheck }
      ? "signedUrl"
      : "repo";

/** The kind of an access declaration, at run time. */
export function kindOf(access: Access): AccessKind {
  if (typeof access === "string") return access;
  if ("signedUrl" in access) return "signedUrl";
  return "orPresigned" in access ? "presigned" : "repo";
}

/** What the handler of a route with access `A` is given about its caller. */
export type Granted<A extends Access> = GrantedByKind[KindOf<A>];

export interface Call<P, Q, B> {
  ctx: AppContext;
  params: P;
  query: Q;
  body: B;
  requestId: string;
  log: Logger;
  /** The request headers, for a route that reads one (Last-Event-ID, a signature). */
  headers: IncomingHttpHeaders;
  /**
   * The body as received, for signatures over its exact bytes and for non-JSON uploads. A route
   * with `base64Fields` gets a large body's bytes partly overwritten by the decoded values.
   */
  rawBody: Buffer | undefined;
  /** The values of `base64Fields` decoded as a large body was parsed, by their placeholders in `body`. */
  decoded: DecodedContents;
}

/** `cookies`: whole `Set-Cookie` values, one header each (shared/auth/cookies.ts). */
export type Reply =
  | { status: number; body?: unknown; headers?: Record<string, string>; cookies?: string[] }
  | { status: number; stream: Readable; headers: Record<string, string>; cookies?: string[] };

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** One row of a declarative route table. */
export interface Route<
  A extends Access = Access,
  PS extends Schema | undefined = Schema | undefined,
  QS extends Schema | undefined = Schema | undefined,
  BS extends Schema | undefined = Schema | undefined,
> {
  method: Method;
  /** Segments; `:name` is one segment, `:name*` one or more; `/-/` separates a repo name from the rest. */
  path: string;
  access: A;
  /**
   * `report`: a CI job with its job token may call this repo route as a writer (the role the route
   * needs) on its own repo; what it may report is the operation's rule (shared/checks/checks.ts).
   * Without it, a job token may call only `GET` routes that need `reader` (shared/http/access.ts).
   */
  jobToken?: "report";
  /**
   * `file`: the access statement also reads the `:path` file (version and body) at the request's
   * `?branch=` and `?at=`, so a file read is one round trip (shared/access/roles.ts).
   */
  prefetch?: "file";
  summary: string;
  /**
   * `branch-head`: the route deals in the branch head's entity tag (shared/http/conditional.ts): a
   * GET answers it as `ETag`, a write honours `If-Match` against it. A write without it refuses
   * `If-Match` with 400 rather than ignore it.
   */
  etag?: "branch-head";
  params?: PS;
  query?: QS;
  body?: BS;
  /**
   * Keys whose values the handler decodes as base64 (a commit's `content`). In a large body, each
   * long one is decoded in the body's own bytes as it is parsed and stands in `body` as a
   * placeholder that `call.decoded` maps to the bytes (shared/http/large-json.ts), so that the
   * content is never held as a string too.
   */
  base64Fields?: readonly string[];
  /** What it answers on success, by status (shared/http/responses.ts); errors are `{code, error}`. */
  responses: Responses;
  handler: (call: Call<Out<PS>, Out<QS>, Out<BS>> & Granted<A>) => Promise<Reply>;
  /**
   * How this route shows a refusal to whoever asked, wherever it arose (access, input, handler):
   * the web pages answer a browser with an HTML page. Undefined: the one JSON error shape.
   */
  errorPage?: (
    err: DomainError,
    call: { actor: Actor | null; headers: IncomingHttpHeaders; path: string },
  ) => Reply | undefined;
  /**
   * A section of the site (the web pages, sign-in): every reply carries `headers` (the reply's
   * own win), refusals included; a path under the route's first segment that no route matches,
   * or a method none takes, is refused with this route's `errorPage` and `headers`. With
   * `answersHead`, a GET answers HEAD too (the same status and headers, no body).
   */
  section?: { headers: Record<string, string>; answersHead: boolean };
}

// biome-ignore lint/suspicious/noExplicitAny: a table holds routes of many shapes
export type AnyRoute = Route<Access, any, any, any>;

/**
 * What the route table keeps of a route's types for clients: its method, path pattern, input
 * schemas and declared responses (`test/support/api.ts` types requests and replies from them).
 */
export type TypedRoute<M extends Method, P extends string, QS, BS, R extends Responses> = AnyRoute & {
  method: M;
  path: P;
  /** Never set: the schemas' types, for clients. */
  readonly types?: { query: QS; body: BS; responses: R };
};

/** Declares a route with its handler typed from its access and its schemas. */
export function route<
  const A extends Access,
  const M extends Method,
  const P extends string,
  const R extends Responses,
  PS extends Schema | undefined = undefined,
  QS extends Schema | undefined = undefined,
  BS extends Schema | undefined = undefined,
>(r: Route<A, PS, QS, BS> & { method: M; path: P; responses: R }): TypedRoute<M, P, QS, BS, R> {
  return r as unknown as TypedRoute<M, P, QS, BS, R>;
}

/** Shorthands for replies. */
export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const noContent = (): Reply => ({ status: 204 });
