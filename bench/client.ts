import http from "node:http";
import type { RawReply, Send, StrictApi } from "../cli/client/index.ts";
import { errorBodyOf, QuireApiError, strictApi, typedApi } from "../cli/client/index.ts";

/**
 * The typed library client (cli/client/, docs/client.md) over the bench's own transport: calls
 * name a route's pattern (`/repos/:repo*\/-/commit`) with `{ params, query, body }` and answer the
 * body the route declares, or throw `QuireApiError`. `getPath` is the one untyped call, for routes
 * the route tables don't declare (the meta group: /healthz).
 */
export interface QuireClient extends StrictApi {
  /** GET of a literal path, for routes outside the typed tables; answers the parsed body. */
  getPath(path: string): Promise<unknown>;
}

// A request that takes this long means the server is stuck; fail it rather than hang the run.
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * A client for `baseUrl`, which must be on 127.0.0.1: the bench only ever talks to the server it
 * started. Keep-alive sockets, because a new TCP connection per request would measure the handshake.
 * The library adds only path filling on top, so measured latency is this transport's.
 */
export function quireClient(baseUrl: string): QuireClient {
  const send = keepAliveSend(baseUrl);
  const api = strictApi(typedApi(send));
  return {
    ...api,
    getPath: async (path) => {
      const res = await send("GET", path, {});
      if (res.status >= 400)
        throw new QuireApiError("GET", path, res.status, errorBodyOf(res.status, res.body));
      return res.body;
    },
  };
}

/** The library's `Send` over node:http with a keep-alive agent, 127.0.0.1 only, with a timeout. */
function keepAliveSend(baseUrl: string): Send {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1")
    throw new Error(`the bench only talks to 127.0.0.1, not ${base.hostname}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  return (method, path, init) =>
    new Promise<RawReply>((resolve, reject) => {
      const payload = init.body === undefined ? undefined : Buffer.from(init.body);
      const headers: http.OutgoingHttpHeaders = { ...init.headers };
      if (payload) headers["content-length"] = payload.length;
      const req = http.request(
        { agent, host: base.hostname, port: base.port, method, path, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            resolve({ status: res.statusCode ?? 0, body: parseBody(res, text), headers: lazyHeaders(res) });
          });
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on("error", reject);
      req.end(payload);
    });
}

/** JSON bodies parsed, anything else (bytes routes, plain-text errors) kept as text. */
function parseBody(res: http.IncomingMessage, text: string): unknown {
  if (text === "" || !(res.headers["content-type"] ?? "").includes("json"))
    return text === "" ? undefined : text;
  return JSON.parse(text);
}

/** `Headers` built only when read: no scenario reads them, so the hot path never pays for it. */
function lazyHeaders(res: http.IncomingMessage): Headers {
  let built: Headers | undefined;
  return new Proxy({} as Headers, {
    get: (_t, key) => {
      built ??= new Headers(
        Object.entries(res.headers).flatMap(([k, v]) =>
          v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((one): [string, string] => [k, one]),
        ),
      );
      const value = Reflect.get(built, key, built);
      return typeof value === "function" ? value.bind(built) : value;
    },
  });
}
