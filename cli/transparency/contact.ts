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
 * through unaudited.
 */
export function auditingFetch(
  server: string,
  store: CheckpointStore,
  doFetch: typeof fetch = fetch,
  onAudit: (audit: Audit) => void = () => {},
): typeof fetch {
  const audits = new Map<string, Promise<unknown>>();
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const repo = repoOfPath(url.pathname);
    if (repo && !/\/-\/(checkpoint|proof\/)/.test(url.pathname)) {
      let audit = audits.get(repo);
      if (!audit) {
        const get = fetchLogGet(server, identityOf(init), doFetch);
        audit = auditRepo(get, store, server, repo, new Date()).then((a) => a && onAudit(a));
        audits.set(repo, audit);
      }
      await audit;
    }
    return doFetch(input, init);
  };
}
