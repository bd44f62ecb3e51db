/**
 * A response as the tests see it: status, parsed JSON body (or text), headers. A body read without
 * a route's type is `unknown`: declared routes go through the typed `api()` (test/support/api.ts),
 * error bodies through `expectError`/`errorOf`, anything else through a schema.
 */
export interface Res<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Client {
  get(path: string): Promise<Res>;
  post(path: string, body?: unknown): Promise<Res>;
  put(path: string, body?: unknown): Promise<Res>;
  patch(path: string, body?: unknown): Promise<Res>;
  delete(path: string): Promise<Res>;
  /** Any method with a raw body and extra headers. */
  raw(
    method: string,
    path: string,
    init?: { body?: string | Buffer; headers?: Record<string, string> },
  ): Promise<Res>;
}

/** An HTTP client for `base` that sends `Authorization: Bearer <token>` when `token()` gives one. */
export function client(base: string, token: () => Promise<string | null>): Client {
  return clientOver(async (method, path, init = {}) => {
    const t = await token();
    const headers: Record<string, string> = { ...init.headers };
    if (t) headers["authorization"] = `Bearer ${t}`;
    return readReply(
      await fetch(base + path, { method, headers, body: init.body as string | Uint8Array | undefined }),
    );
  });
}

/** A reply as the tests see it: JSON parsed when it says it is JSON, text otherwise. */
export async function readReply(res: Response): Promise<Res> {
  const text = await res.text();
  let body: unknown = text;
  if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") body = JSON.parse(text);
  return { status: res.status, body, headers: res.headers };
}

/** The JSON methods over one way of sending a request (bearer, cookie, ...). */
export function clientOver(raw: Client["raw"]): Client {
  const json = (method: string) => (path: string, body?: unknown) =>
    raw(
      method,
      path,
      body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } },
    );
  return {
    get: json("GET"),
    post: json("POST"),
    put: json("PUT"),
    patch: json("PATCH"),
    delete: json("DELETE"),
    raw,
  };
}

/** base64 of a UTF-8 string, for commit bodies. */
export const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");
