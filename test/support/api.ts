import { typedApi } from "../../cli/client/http.ts";
import type { Api, ApiRes, Method, ParamNames, PathOf } from "../../cli/client/types.ts";
import type { Client, Res } from "./client.ts";

/**
 * A client typed by the route table: the path is a route's pattern, its parameters, query and body
 * are typed from the route's schemas, and the reply's body from the responses it declares.
 *
 *   const tree = okBody(await api(app.as(ADMIN)).get("/repos/:repo*\/-/tree", { params: { repo } }));
 *   tree.entries[0]?.path; // string
 *
 * The machinery is the CLI's library client (cli/client/); this is its face over the tests'
 * `client()` (test/support/client.ts), which stays for requests a route does not declare (raw
 * bodies, bad input). Paths are filled leniently, so a test can send what a real client refuses.
 */

export { fillPath } from "../../cli/client/path.ts";
/** @public The client's types, under the names the tests have always imported. */
export type { Api, ApiError, ApiRes, Options, PathOf, ReplyOf } from "../../cli/client/types.ts";

/** The typed face of a `client()` (`app.as(email)`, `app.anonymous`). */
export function api(client: Client): Api {
  return typedApi((method, path, init) => client.raw(method, path, init), { lenient: true });
}

/** The body of a successful reply; throws with the status and error body otherwise. */
export function okBody<T>(res: ApiRes<T>): T {
  if (!res.ok) throw new Error(`expected success, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A deliberately bad request's options: a route's parameters, any query and body. */
type LooseOptions<P> = ([ParamNames<P>] extends [never]
  ? { params?: undefined }
  : { params: Record<ParamNames<P>, string> }) & { query?: Record<string, unknown>; body?: unknown };
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
