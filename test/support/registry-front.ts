import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small HTTP front for the test registry (go-containerregistry's serves anonymously and never
 * lies), adding what the worker must handle from real registries: the distribution spec's auth
 * challenge (Basic, or Bearer with a token service as Docker Hub runs it) and, on demand, bytes
 * that do not match their digest. It records every request path, so tests can count blob fetches.
 */
export interface RegistryFrontOptions {
  /** The real registry, `127.0.0.1:port`. */
  upstream: string;
  auth?: { scheme: "basic" | "bearer"; username: string; password: string };
  /** Rewrites a response body before it is sent (`kind` from the request path). */
  tamper?: (kind: "manifests" | "blobs", body: Buffer) => Buffer;
  /** Answers this many requests with `503` first, as a registry having a bad moment. */
  failFirst?: number;
}

export interface RegistryFront {
  host: string;
  /** Paths requested so far (`/v2/…`, `/token?…`), in order. */
  requests: string[];
  close(): Promise<void>;
}

const TOKEN = "front-issued-token";

export async function startRegistryFront(options: RegistryFrontOptions): Promise<RegistryFront> {
  const requests: string[] = [];
  let failures = options.failFirst ?? 0;
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? "");
    if (failures > 0) {
      failures--;
      res.writeHead(503).end();
      return;
    }
    void handle(options, host, req, res).catch((error: Error) => {
      res.writeHead(502).end(error.message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function basicOk(header: string | undefined, auth: NonNullable<RegistryFrontOptions["auth"]>): boolean {
  return header === `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
}

async function handle(
  options: RegistryFrontOptions,
  host: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", `http://${host}`);
  const { auth } = options;
  if (auth?.scheme === "bearer" && url.pathname === "/token") {
    // Docker Hub's token service: credentials are optional, and without them only public scopes
    // are granted. Here nothing is public, so no credentials means no token.
    if (!basicOk(req.headers.authorization, auth)) return void res.writeHead(401).end();
    if (
      url.searchParams.get("service") !== "test-registry" ||
      !url.searchParams.get("scope")?.endsWith(":pull")
    ) {
      return void res.writeHead(400).end();
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ token: TOKEN }));
    return;
  }
  if (auth) {
    const ok =
      auth.scheme === "basic"
        ? basicOk(req.headers.authorization, auth)
        : req.headers.authorization === `Bearer ${TOKEN}`;
    if (!ok) {
      const repository = url.pathname.match(/^\/v2\/(.+)\/(?:manifests|blobs)\//)?.[1] ?? "";
      const challenge =
        auth.scheme === "basic"
          ? 'Basic realm="test-registry"'
          : `Bearer realm="http://${host}/token",service="test-registry",scope="repository:${repository}:pull"`;
      res.writeHead(401, { "www-authenticate": challenge, "content-type": "application/json" });
      res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }));
      return;
    }
  }
  const upstream = await fetch(`http://${options.upstream}${url.pathname}${url.search}`, {
    headers: req.headers.accept ? { accept: req.headers.accept } : {},
  });
  let body: Buffer = Buffer.from(await upstream.arrayBuffer());
  const kind = url.pathname.includes("/manifests/")
    ? "manifests"
    : url.pathname.includes("/blobs/")
      ? "blobs"
      : null;
  if (kind && options.tamper && upstream.ok) body = options.tamper(kind, body);
  const headers: Record<string, string> = {};
  for (const name of ["content-type", "docker-content-digest"]) {
    const value = upstream.headers.get(name);
    if (value) headers[name] = value;
  }
  res.writeHead(upstream.status, headers).end(body);
}
