import { errorBodyOf, QuireApiError } from "./errors.ts";
import { fillPath, queryString } from "./path.ts";
import type { Api, ApiRes, Method, StrictApi } from "./types.ts";

/** What a transport answers: status, parsed JSON body (or text), headers. */
export interface RawReply {
  status: number;
  body: unknown;
  headers: Headers;
}

/** Sends one request; `path` is already filled and carries its query string. */
export type Send = (
  method: Method,
  path: string,
  init: { body?: string; headers?: Record<string, string> },
) => Promise<RawReply>;

interface CallOptions {
  params?: Record<string, string>;
  query?: object;
  body?: unknown;
  headers?: Record<string, string>;
}

const METHODS = { get: "GET", post: "POST", put: "PUT", patch: "PATCH", delete: "DELETE" } as const;

/** The typed API over any transport (`lenient`: see `fillPath`). */
export function typedApi(send: Send, opts: { lenient?: boolean } = {}): Api {
  const call =
    (method: Method) =>
    async (pattern: string, o: CallOptions = {}) => {
      const url = fillPath(pattern, o.params, opts) + queryString(o.query);
      const json = o.body === undefined ? undefined : JSON.stringify(o.body);
      const headers = { ...(json === undefined ? {} : { "content-type": "application/json" }), ...o.headers };
      const res = await send(method, url, json === undefined ? { headers } : { body: json, headers });
      return { ok: res.status < 400, status: res.status, body: res.body, headers: res.headers };
    };
  const api = Object.fromEntries(Object.entries(METHODS).map(([k, m]) => [k, call(m)]));
  return api as unknown as Api;
}

/** The body of a successful reply; a `QuireApiError` otherwise. */
export function okBody<T>(res: ApiRes<T>, what = "request"): T {
  if (!res.ok) throw new QuireApiError("", what, res.status, res.body);
  return res.body;
}

/** The same API answering bodies and throwing `QuireApiError` on any error answer. */
export function strictApi(api: Api): StrictApi {
  const strict = (key: keyof Api) => async (pattern: string, o?: CallOptions) => {
    const res = await (api[key] as (p: string, o?: CallOptions) => Promise<ApiRes<unknown>>)(pattern, o);
    if (!res.ok) {
      const path = fillPath(pattern, o?.params, { lenient: true });
      throw new QuireApiError(METHODS[key], path, res.status, errorBodyOf(res.status, res.body));
    }
    return res.body;
  };
  const out = Object.fromEntries(Object.keys(METHODS).map((k) => [k, strict(k as keyof Api)]));
  return out as unknown as StrictApi;
}

/** Where the client sends requests, and with which credentials. */
export interface ClientOptions {
  /** Base URL of the server, e.g. `https://quire.example.com`. */
  server: string;
  /** A bearer token (an ID token), or a function that gives a fresh one per request. */
  token?: string | null | (() => Promise<string | null> | string | null);
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Sent as `User-Agent`. */
  userAgent?: string;
  /**
   * Development mode only (DEV_IDENTITIES on the server): act as this listed identity, sent as
   * `X-Quire-Dev-Identity`. A server outside development mode refuses it.
   */
  devIdentity?: string | undefined;
}

/** A transport over `fetch`, that sends the bearer token and parses JSON bodies. */
export function fetchTransport(opts: ClientOptions): {
  send: Send;
  /** The raw response of a GET (for bytes: archives, logs), status unchecked. */
  open(path: string, init?: { headers?: Record<string, string>; signal?: AbortSignal }): Promise<Response>;
  headers(): Promise<Record<string, string>>;
} {
  const base = opts.server.replace(/\/+$/, "");
  const doFetch = opts.fetch ?? fetch;
  const headers = async (): Promise<Record<string, string>> => {
    const t = typeof opts.token === "function" ? await opts.token() : opts.token;
    const h: Record<string, string> = {};
    if (t) h["authorization"] = `Bearer ${t}`;
    if (opts.userAgent) h["user-agent"] = opts.userAgent;
    if (opts.devIdentity) h["x-quire-dev-identity"] = opts.devIdentity;
    return h;
  };
  const send: Send = async (method, path, init) => {
    const res = await doFetch(base + path, {
      method,
      headers: { ...(await headers()), ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    const text = await res.text();
    let body: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { status: res.status, body, headers: res.headers };
  };
  const open = async (path: string, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}) =>
    doFetch(base + path, {
      headers: { ...(await headers()), ...init.headers },
      ...(init.signal ? { signal: init.signal } : {}),
    });
  return { send, open, headers };
}
