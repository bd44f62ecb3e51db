import http from "node:http";
import type { AddressInfo } from "node:net";
import { groupOf, routeRequest, type UrlMap } from "../fast/deploy/urlmap.ts";

/**
 * The parts of Google Cloud that the rehearsal (test/rehearsal/) and the topology (./topology.ts)
 * put in front of the built processes: the load balancer (terraform's URL map, followed rule by
 * rule), the front of a private function that adds the caller's OIDC token (what Cloud Tasks does
 * for a task), and the instance metadata server's token endpoint.
 */

export interface Front {
  url: string;
  close(): Promise<void>;
}

/**
 * Forwards one request to `target` (a base URL), streaming both ways (SSE streams pass through).
 * The Host header is the one the client sent, as Google's front ends keep it.
 */
function forward(req: http.IncomingMessage, res: http.ServerResponse, target: string, extra = {}): void {
  const url = new URL(req.url ?? "/", target);
  const upstream = http.request(
    url,
    { method: req.method, headers: { ...req.headers, ...extra } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", (err) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`rehearsal front: ${err.message}`);
  });
  res.on("close", () => upstream.destroy());
  req.pipe(upstream);
}

async function listen(server: http.Server): Promise<Front> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The load balancer: each request goes where terraform's URL map sends it (`backends` maps a
 * group, `events` for the SSE service, to the URL of its process). `routed` records the group of
 * every request, for the walk of the OpenAPI operations.
 */
export function startLoadBalancer(
  map: UrlMap,
  backends: () => Map<string, string>,
  routed: { url: string; group: string }[] = [],
  host = "quire.example.com",
): Promise<Front> {
  const server = http.createServer((req, res) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v]] : [])),
    );
    const group = groupOf(routeRequest(map, { host, url: req.url ?? "/", headers }));
    routed.push({ url: req.url ?? "/", group });
    const target = backends().get(group);
    if (target === undefined) {
      res.writeHead(502, { "content-type": "text/plain" }).end(`no process runs ${group}`);
      return;
    }
    forward(req, res, target);
  });
  return listen(server);
}

/**
 * A private function's front: every call arrives with an ID token as its bearer, as Cloud Tasks
 * sends one, for the audience `https://<Host><path>` (what the function expects by default).
 */
export function startTokenFront(
  target: () => string,
  token: (audience: string) => Promise<string>,
): Promise<Front> {
  const server = http.createServer((req, res) => {
    const audience = `https://${req.headers.host}${new URL(req.url ?? "/", "http://x").pathname}`;
    token(audience).then(
      (t) => forward(req, res, target(), { authorization: `Bearer ${t}` }),
      (err) => res.writeHead(500).end(String(err)),
    );
  });
  return listen(server);
}

/** The instance metadata server's token endpoint: the service account's access token. */
export function startMetadataServer(accessToken: string): Promise<Front & { host: string }> {
  const server = http.createServer((req, res) => {
    if (req.headers["metadata-flavor"] !== "Google") return void res.writeHead(403).end();
    res.writeHead(200, { "content-type": "application/json", "metadata-flavor": "Google" });
    res.end(JSON.stringify({ access_token: accessToken, expires_in: 3599, token_type: "Bearer" }));
  });
  return listen(server).then((front) => ({ ...front, host: new URL(front.url).host }));
}
