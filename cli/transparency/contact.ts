import { type Audit, auditRepo, type LogGet, repoOfPath } from "./audit.ts";
import type { CheckpointStore } from "./store.ts";

/** The request headers a log read repeats from the request it precedes: who is asking. */
const IDENTITY_HEADERS = ["authorization", "user-agent", "x-quire-dev-identity"];

function identityOf(init: RequestInit | undefined): Record<string, string> {
  const all = new Headers(init?.headers);
  return Object.fromEntries(IDENTITY_HEADERS.flatMap((h) => (all.has(h) ? [[h, all.get(h) as string]] : [])));
}

/** A LogGet over `fetch` on `server` with these headers. */
export function fetchLogGet(
  server: string,
  headers: Record<string, string>,
  doFetch: typeof fetch = fetch,
): LogGet {
  const base = server.replace(/\/+$/, "");
  return async (path) => {
    const res = await doFetch(base + path, { headers });
    return { status: res.status, text: await res.text() };
  };
}

/**
 * A `fetch` for the CLI's client that audits each repo's log on the process's first request to
 * it (cli/transparency/audit.ts): every command that touches a repo checks that its history
 * extends the one seen last time before it reads or writes anything. The log's own reads pass
 * through unaudited. `witnesses` are verifier keys whose cosignature every checkpoint must carry
 * (the QUIRE_REQUIRE_WITNESS setting).
 */
export function auditingFetch(
  server: string,
  store: CheckpointStore,
  doFetch: typeof fetch = fetch,
  onAudit: (audit: Audit) => void = () => {},
  witnesses: string[] = [],
): typeof fetch {
  const audits = new Map<string, Promise<unknown>>();
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const repo = repoOfPath(url.pathname);
    if (repo && !/\/-\/(checkpoint|proof\/)/.test(url.pathname)) {
      let audit = audits.get(repo);
      if (!audit) {
        const get = fetchLogGet(server, identityOf(init), doFetch);
        audit = auditRepo(get, store, server, repo, new Date(), witnesses).then((a) => a && onAudit(a));
        audits.set(repo, audit);
      }
      await audit;
    }
    return doFetch(input, init);
  };
}

/** A POST of a JSON body on `server` with these headers: status and body text. */
export function fetchLogPost(
  server: string,
  headers: Record<string, string>,
  doFetch: typeof fetch = fetch,
): (path: string, body: unknown) => Promise<{ status: number; text: string }> {
  const base = server.replace(/\/+$/, "");
  return async (path, body) => {
    const res = await doFetch(base + path, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
}

/** The witness keys the QUIRE_REQUIRE_WITNESS setting names (comma or space separated). */
export function requiredWitnesses(env: Record<string, string | undefined>): string[] {
  return (env["QUIRE_REQUIRE_WITNESS"] ?? "").split(/[\s,]+/).filter((k) => k !== "");
}
