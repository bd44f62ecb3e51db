import type { z } from "zod";
import type { groups } from "../../functions/groups.ts";
import type { Method } from "../../shared/http/route.ts";
import type { Client, Res } from "./client.ts";

/**
 * A client typed by the route table: the path is a route's pattern, its parameters, query and body
 * are typed from the route's schemas, and the reply's body from the responses it declares.
 *
 *   const tree = okBody(await api(app.as(ADMIN)).get("/repos/:repo*\/-/tree", { params: { repo } }));
 *   tree.entries[0]?.path; // string
 *
 * The untyped `client()` (test/support/client.ts) stays for the existing tests and for requests a
 * route does not declare (raw bodies, bad input).
 */

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
export type PathOf<M extends Method> = Extract<KnownRoute, { method: M }>["path"];

type Strip<N> = N extends `${infer Name}*` ? Name : N;
/** `/repos/:repo*\/-/file/:path*` → "repo" | "path". */
type ParamNames<P> = P extends `${string}:${infer N}/${infer Rest}`
  ? Strip<N> | ParamNames<Rest>
  : P extends `${string}:${infer N}`
    ? Strip<N>
    : never;

type InputOf<S> = S extends z.ZodType ? z.input<S> : never;
/** A declared body: JSON by its schema, text for bytes, nothing for 204 or a redirect. */
type BodyOf<D> = D extends z.ZodType ? z.output<D> : D extends { contentType: string } ? string : undefined;
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
type Query<T> = [InputOf<T extends { query: infer Q } ? Q : never>] extends [never]
  ? { query?: undefined }
  : { query?: InputOf<T extends { query: infer Q } ? Q : never> };
type Body<T> = [InputOf<T extends { body: infer B } ? B : never>] extends [never]
  ? { body?: undefined }
  : { body: InputOf<T extends { body: infer B } ? B : never> };
export type Options<M extends Method, P> = Params<P> &
  Query<Shape<RouteAt<M, P>>> &
  Body<Shape<RouteAt<M, P>>>;

type Call<M extends Method> = <P extends PathOf<M>>(
  path: P,
  ...opts: [ParamNames<P>] extends [never] ? [Options<M, P>?] : [Options<M, P>]
) => Promise<ApiRes<ReplyOf<M, P>>>;

export interface Api {
  get: Call<"GET">;
  post: Call<"POST">;
  put: Call<"PUT">;
  patch: Call<"PATCH">;
  delete: Call<"DELETE">;
}

/** The concrete path of a pattern: each `:name` or `:name*` replaced by its value, segments of a `*` kept. */
export function fillPath(pattern: string, params: Record<string, string> = {}): string {
  return pattern.replace(/:(\w+)\*?/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for ${whole} in ${pattern}`);
    return whole.endsWith("*")
      ? value.split("/").map(encodeURIComponent).join("/")
      : encodeURIComponent(value);
  });
}

function queryString(query: Record<string, unknown> | undefined): string {
  const entries = Object.entries(query ?? {}).filter(([, v]) => v !== undefined);
  return entries.length === 0
    ? ""
    : `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)]))}`;
}

/** The typed face of a `client()` (`app.as(email)`, `app.anonymous`). */
export function api(client: Client): Api {
  const call =
    (method: Method) =>
    async (path: string, opts: { params?: Record<string, string>; query?: object; body?: unknown } = {}) => {
      const url = fillPath(path, opts.params) + queryString(opts.query as Record<string, unknown>);
      const res = await client.raw(
        method,
        url,
        opts.body === undefined
          ? {}
          : { body: JSON.stringify(opts.body), headers: { "content-type": "application/json" } },
      );
      return { ok: res.status < 400, status: res.status, body: res.body, headers: res.headers };
    };
  return {
    get: call("GET"),
    post: call("POST"),
    put: call("PUT"),
    patch: call("PATCH"),
    delete: call("DELETE"),
  } as Api;
}

/** The body of a successful reply; throws with the status and error body otherwise. */
export function okBody<T>(res: ApiRes<T>): T {
  if (!res.ok) throw new Error(`expected success, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A deliberately bad request's options: a route's parameters, any query and body. */
type LooseOptions<P> = Params<P> & { query?: Record<string, unknown>; body?: unknown };
type LooseCall<M extends Method> = <P extends PathOf<M>>(
  path: P,
  ...opts: [ParamNames<P>] extends [never] ? [LooseOptions<P>?] : [LooseOptions<P>]
) => Promise<Res>;

/** `api()` with the input left unchecked, for bad requests; read the reply with `expectError`. */
export interface LooseApi {
  get: LooseCall<"GET">;
  post: LooseCall<"POST">;
  put: LooseCall<"PUT">;
  patch: LooseCall<"PATCH">;
  delete: LooseCall<"DELETE">;
}

/**
 * The typed client's calls for deliberately bad requests (invalid bodies, forged fields, bad
 * queries): the path is still a route's pattern with its parameters, the reply body `unknown`.
 */
export const unchecked = (client: Client): LooseApi => api(client) as unknown as LooseApi;
