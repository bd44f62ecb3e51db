import http from "node:http";

/** An answer whose status was not the one expected; the message carries the server's error body. */
export class HttpError extends Error {
  readonly status: number;

  constructor(status: number, what: string, body: string) {
    super(`${what}: HTTP ${status} ${body.slice(0, 300)}`);
    this.status = status;
  }
}

/** JSON over HTTP to one local Quire. Every call resolves to the parsed body or throws HttpError. */
export interface QuireClient {
  get<T = unknown>(path: string): Promise<T>;
  post<T = unknown>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
}

// A request that takes this long means the server is stuck; fail it rather than hang the run.
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * A client for `baseUrl`, which must be on 127.0.0.1: the bench only ever talks to the server it
 * started. Keep-alive sockets, because a new TCP connection per request would measure the handshake.
 */
export function quireClient(baseUrl: string): QuireClient {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1")
    throw new Error(`the bench only talks to 127.0.0.1, not ${base.hostname}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const send = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path,
          headers: payload ? { "content-type": "application/json", "content-length": payload.length } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = res.statusCode ?? 0;
            if (status < 200 || status > 299) reject(new HttpError(status, `${method} ${path}`, text));
            else resolve((text === "" ? undefined : JSON.parse(text)) as T);
          });
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on("error", reject);
      req.end(payload);
    });
  return {
    get: (path) => send("GET", path),
    post: (path, body) => send("POST", path, body),
    delete: (path) => send<void>("DELETE", path),
  };
}
