import type { StrictApi } from "./types.ts";

/*
 * Lists that paginate (SPEC.md "Limits"): the tree, by `after` = the path of the last entry of the
 * previous page, and a file's history, by `after` = the sequence of the last entry. A page shorter
 * than `limit` is the last one. Every other list answers whole.
 */

/** Every entry of every page, fetching the next page only when the caller gets that far. */
export async function* paginate<T>(
  fetchPage: (after: string | undefined) => Promise<{ entries: T[] }>,
  cursorOf: (last: T) => string,
  pageSize: number,
): AsyncGenerator<T, void, undefined> {
  let after: string | undefined;
  for (;;) {
    const { entries } = await fetchPage(after);
    yield* entries;
    const last = entries.at(-1);
    if (last === undefined || entries.length < pageSize) return;
    after = cursorOf(last);
  }
}

export interface TreeOptions {
  branch?: string;
  at?: number;
  /** Entries per request (the server's default is 100). */
  pageSize?: number;
}

/** Every entry of a repo's tree at a branch (or one of its sequences). */
export function treeEntries(api: StrictApi, repo: string, opts: TreeOptions = {}) {
  const limit = opts.pageSize ?? 100;
  return paginate(
    (after) =>
      api.get("/repos/:repo*/-/tree", {
        params: { repo },
        query: {
          branch: opts.branch,
          at: opts.at === undefined ? undefined : String(opts.at),
          limit: String(limit),
          after,
        },
      }),
    (e) => e.path,
    limit,
  );
}

/** Every commit of a file's history, newest first. */
export function fileHistory(
  api: StrictApi,
  repo: string,
  path: string,
  opts: { branch?: string; pageSize?: number } = {},
) {
  const limit = opts.pageSize ?? 100;
  return paginate(
    (after) =>
      api.get("/repos/:repo*/-/file/:path*/history", {
        params: { repo, path },
        query: { branch: opts.branch, limit: String(limit), after },
      }),
    (e) => String(e.sequence),
    limit,
  );
}
