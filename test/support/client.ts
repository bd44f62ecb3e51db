/** A response as the tests see it: status, parsed JSON body (or text), headers. */
export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Client {
  get<T = any>(path: string): Promise<Res<T>>;
  post<T = any>(path: string, body?: unknown): Promise<Res<T>>;
  put<T = any>(path: string, body?: unknown): Promise<Res<T>>;
  patch<T = any>(path: string, body?: unknown): Promise<Res<T>>;
  delete<T = any>(path: string): Promise<Res<T>>;
  /** Any method with a raw body and extra headers. */
  raw(
    method: string,
    path: string,
    init?: { body?: string | Buffer; headers?: Record<string, string> },
  ): Promise<Res>;
}

/** An HTTP client for `base` that sends `Authorization: Bearer <token>` when `token()` gives one. */
export function client(base: string, token: () => Promise<string | null>): Client {
  const raw: Client["raw"] = async (method, path, init = {}) => {
    const t = await token();
    const headers: Record<string, string> = { ...init.headers };
    if (t) headers["authorization"] = `Bearer ${t}`;
    const res = await fetch(base + path, {
      method,
      headers,
      body: init.body as string | Uint8Array | undefined,
    });
    const text = await res.text();
    let body: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") body = JSON.parse(text);
    return { status: res.status, body, headers: res.headers };
  };
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
