import type { z } from "zod";
import type { groups } from "../../functions/groups.ts";
import type { Method } from "../../shared/http/route.ts";

/*
 * The API's types, read from the server's own route tables (functions/groups.ts): a route's path
 * pattern, its parameters, query and body (from its zod schemas) and the bodies it declares it
 * answers. Only types cross over (`import type`), so nothing of the server reaches a bundle of the
 * client, and a changed field on the server breaks the client's compile.
 */

export type { Method };

type TableRoute = (typeof groups)[keyof typeof groups][number];
/** The routes whose path is a literal (the meta group's routes are built untyped). */
type KnownRoute = TableRoute extends infer R
  ? R extends { path: infer P }
    ? string extends P
      ? never
      : R
    : never
  : never;

type RouteAt<M extends Method, P> = Extract<KnownRoute, { method: M; path: P }>;
/** Every path pattern the API serves for method `M`, e.g. `/repos/:repo*\/-/tree`. */
export type PathOf<M extends Method> = Extract<KnownRoute, { method: M }>["path"];

type Strip<N> = N extends `${infer Name}*` ? Name : N;
/** `/repos/:repo*\/-/file/:path*` → "repo" | "path". */
export type ParamNames<P> = P extends `${string}:${infer N}/${infer Rest}`
  ? Strip<N> | ParamNames<Rest>
  : P extends `${string}:${infer N}`
    ? Strip<N>
    : never;

type InputOf<S> = S extends z.ZodType ? z.input<S> : never;
/** A declared body: JSON by its schema, text for bytes, nothing for 204 or a redirect. */
type BodyOf<D> = D extends z.ZodType ? z.output<D> : D extends { contentType: string } ? string : undefined;
/** The body of a successful reply of `M P`: the union of what the route declares. */
export type ReplyOf<M extends Method, P> =
  Shape<RouteAt<M, P>> extends { responses: infer R } ? { [S in keyof R]: BodyOf<R[S]> }[keyof R] : never;

/** The one error body (docs/errors.md). */
export interface ApiError {
  code: string;
  error: string;
  [detail: string]: unknown;
}

/** A reply: a 2xx/3xx carries the declared body, anything else the error body. */
export type ApiRes<T> =
  | { ok: true; status: number; body: T; headers: Headers }
  | { ok: false; status: number; body: ApiError; headers: Headers };

type Params<P> = [ParamNames<P>] extends [never]
  ? { params?: undefined }
  : { params: Record<ParamNames<P>, string> };
/** The types a route keeps for clients (`TypedRoute` in shared/http/route.ts). */
type Shape<R> = R extends { types?: infer T } ? NonNullable<T> : never;
type QueryIn<M extends Method, P> = InputOf<Shape<RouteAt<M, P>> extends { query: infer Q } ? Q : never>;
type BodyIn<M extends Method, P> = InputOf<Shape<RouteAt<M, P>> extends { body: infer B } ? B : never>;
type Query<Q> = [Q] extends [never] ? { query?: undefined } : { query?: Q };
type Body<B> = [B] extends [never] ? { body?: undefined } : { body: B };
/** What a call of `M P` takes: its path parameters, query and body as the route's schemas accept them. */
export type Options<M extends Method, P> = Params<P> &
  Query<QueryIn<M, P>> &
  Body<BodyIn<M, P>> & {
    /** Extra request headers: `Idempotency-Key`, `If-Match` (docs/api.md, "Safe retries"). */
    headers?: Record<string, string>;
  };
/** The query a route accepts (for helpers that page through it). */
export type QueryOf<M extends Method, P> = QueryIn<M, P>;

/** The trailing arguments of a call: optional when the path has no parameters. */
export type OptsArg<M extends Method, P> = [ParamNames<P>] extends [never]
  ? [Options<M, P>?]
  : [Options<M, P>];

type Call<M extends Method> = <P extends PathOf<M>>(
  path: P,
  ...opts: OptsArg<M, P>
) => Promise<ApiRes<ReplyOf<M, P>>>;

/** Every method of the API as a typed call that answers the reply, success or error. */
export interface Api {
  get: Call<"GET">;
  post: Call<"POST">;
  put: Call<"PUT">;
  patch: Call<"PATCH">;
  delete: Call<"DELETE">;
}

type StrictCall<M extends Method> = <P extends PathOf<M>>(
  path: P,
  ...opts: OptsArg<M, P>
) => Promise<ReplyOf<M, P>>;

/** The same calls answering only the body of a success; anything else throws `QuireApiError`. */
export interface StrictApi {
  get: StrictCall<"GET">;
  post: StrictCall<"POST">;
  put: StrictCall<"PUT">;
  patch: StrictCall<"PATCH">;
  delete: StrictCall<"DELETE">;
}
