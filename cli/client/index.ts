import { errorBodyOf, QuireApiError } from "./errors.ts";
import { type ClientOptions, fetchTransport, strictApi, typedApi } from "./http.ts";
import { fileHistory, paginate, type TreeOptions, treeEntries } from "./pages.ts";
import { fillPath, queryString } from "./path.ts";
import { type FollowOptions, follow, type StreamMessage } from "./sse.ts";
import type { Api, StrictApi } from "./types.ts";

export { errorBodyOf, QuireApiError } from "./errors.ts";
export { type ClientOptions, okBody, type RawReply, type Send, strictApi, typedApi } from "./http.ts";
export { fillPath, queryString } from "./path.ts";
export { parseEventStream, type StreamMessage, StreamRefused } from "./sse.ts";
export type * from "./types.ts";
export { paginate };

export interface EventsOptions {
  /** A repo's stream; omitted: the global stream (global admins). */
  repo?: string;
  /** Event types to keep (the repo stream filters on the server), e.g. `commit.created`. */
  types?: string[];
  lastEventId?: string;
  signal?: AbortSignal;
  onReconnect?: FollowOptions["onReconnect"];
  backoff?: FollowOptions["backoff"];
  maxRetries?: number;
}

/** A client of one Quire server: typed calls, pages, streams and downloads. */
export interface QuireClient extends StrictApi {
  /** The same calls answering the reply, success or error, without throwing. */
  raw: Api;
  server: string;
  /** Every entry of a tree, page after page. */
  tree(
    repo: string,
    opts?: TreeOptions,
  ): AsyncGenerator<{ path: string; [k: string]: unknown }, void, undefined>;
  /** Every commit of a file's history, page after page. */
  fileHistory: (
    repo: string,
    path: string,
    opts?: { branch?: string; pageSize?: number },
  ) => ReturnType<typeof fileHistory>;
  /** Events of a repo or of the server, live, resuming after a drop with `Last-Event-ID`. */
  events(opts?: EventsOptions): AsyncGenerator<StreamMessage, void, undefined>;
  /** The response of a GET with a bytes body (an archive, a log); throws QuireApiError on an error status. */
  download(
    pattern: string,
    params?: Record<string, string>,
    query?: object,
    signal?: AbortSignal,
  ): Promise<Response>;
}

/**
 * A client of the Quire API:
 *
 *   const quire = createClient({ server: "https://quire.example.com", token: process.env.QUIRE_TOKEN });
 *   const repo = await quire.get("/repos/:repo*", { params: { repo: "acme/docs" } });
 *   for await (const entry of quire.tree("acme/docs")) console.log(entry.path);
 */
export function createClient(opts: ClientOptions): QuireClient {
  const transport = fetchTransport(opts);
  const raw = typedApi(transport.send);
  const strict = strictApi(raw);
  const download: QuireClient["download"] = async (pattern, params, query, signal) => {
    const path = fillPath(pattern, params) + queryString(query);
    const res = await transport.open(path, signal ? { signal } : {});
    if (res.status >= 400) {
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      throw new QuireApiError("GET", path, res.status, errorBodyOf(res.status, body));
    }
    return res;
  };
  return {
    ...strict,
    raw,
    server: opts.server,
    tree: (repo, o) => treeEntries(strict, repo, o),
    fileHistory: (repo, path, o) => fileHistory(strict, repo, path, o),
    events: (o = {}) => {
      const path = o.repo
        ? fillPath("/repos/:repo*/-/events", { repo: o.repo }) +
          queryString({ types: o.types?.length ? o.types.join(",") : undefined })
        : `/events${queryString({ repo: undefined })}`;
      return follow({
        open: (last, signal) =>
          transport.open(path, {
            headers: { accept: "text/event-stream", ...(last ? { "last-event-id": last } : {}) },
            signal,
          }),
        ...(o.lastEventId ? { lastEventId: o.lastEventId } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.onReconnect ? { onReconnect: o.onReconnect } : {}),
        ...(o.backoff ? { backoff: o.backoff } : {}),
        ...(o.maxRetries !== undefined ? { maxRetries: o.maxRetries } : {}),
      });
    },
    download,
  };
}
