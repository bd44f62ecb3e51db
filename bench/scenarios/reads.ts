import type { QueryOf } from "../../cli/client/index.ts";
import type { QuireClient } from "../client.ts";
import { fixturePath, hotFile, type RepoFixture } from "../fixtures.ts";
import { type Budget, type LoadResult, runLoad } from "../load.ts";
import { progress } from "../log.ts";

export const PAGE = 100;
/** The "old" sequence of the file reads: early in both repos, yet after some edits to hot files. */
export const OLD_SEQUENCE = 500;

/** What a tree page request asks for: the route's own query type. */
type TreeQuery = NonNullable<QueryOf<"GET", "/repos/:repo*/-/tree">>;

/** A read the cases make: a tree page, or one file at a sequence. */
type Read = { tree: TreeQuery } | { file: string; at: number };

/** One kind of read; `read` gives request i's read, so a case can rotate over paths. */
export interface ReadCase {
  id: string;
  label: string;
  /** True for tree pages, which the latency targets apply to. */
  treePage: boolean;
  read: (repo: RepoFixture, i: number) => Read;
}

const tree = (query: TreeQuery): Read => ({ tree: { limit: String(PAGE), ...query } });

/** Sends one read through the typed routes; answers what the check below needs of either reply. */
async function send(
  q: QuireClient,
  repo: RepoFixture,
  read: Read,
): Promise<{ entries?: unknown[]; content?: unknown }> {
  if ("tree" in read) return q.get("/repos/:repo*/-/tree", { params: { repo: repo.name }, query: read.tree });
  return q.get("/repos/:repo*/-/file/:path*", {
    params: { repo: repo.name, path: read.file },
    query: { at: String(read.at) },
  });
}

export const READ_CASES: ReadCase[] = [
  { id: "tree-head", label: "tree page at the head", treePage: true, read: () => tree({}) },
  {
    id: "tree-early",
    label: "tree page at an early sequence (at=, right after the bulk commits)",
    treePage: true,
    read: (r) => tree({ at: String(r.treeComplete) }),
  },
  {
    id: "tree-deep",
    label: "tree page deep in the tree (after= cursor at 90% of the paths)",
    treePage: true,
    read: (r) => tree({ after: fixturePath(Math.floor(r.files * 0.9)) }),
  },
  {
    id: "tree-branch",
    label: "tree page of a branch (5 own commits laid over main)",
    treePage: true,
    read: (r) => tree({ branch: r.branch }),
  },
  {
    id: "file-old",
    label: `file read at an old sequence (at=${OLD_SEQUENCE}), hot and cold files in turn`,
    treePage: false,
    read: (r, i) => {
      const file = i % 2 === 0 ? hotFile((i / 2) % 10, r.files) : (i * 37) % r.files;
      return { file: fixturePath(file), at: OLD_SEQUENCE };
    },
  },
];

/**
 * One client, one request at a time: these are latencies without queueing. Tree answers are
 * checked for a full page, so a broken read cannot pass for a fast one.
 */
export async function measureRead(
  q: QuireClient,
  c: ReadCase,
  repo: RepoFixture,
  budget: Budget,
): Promise<LoadResult> {
  progress(`reads: ${c.id} on ${repo.name}`);
  return runLoad({
    label: `${c.id} on ${repo.name}`,
    concurrency: 1,
    warmup: 20,
    ...budget,
    send: async (i) => {
      const body = await send(q, repo, c.read(repo, i));
      if (c.treePage && body.entries?.length !== PAGE)
        throw new Error(`${c.id}: expected ${PAGE} entries, got ${body.entries?.length}`);
      if (!c.treePage && typeof body.content !== "string") throw new Error(`${c.id}: no content`);
    },
  });
}

/** GET /healthz: one pooled `SELECT 1` behind the whole HTTP stack, the floor under every read. */
export async function measureHttpFloor(q: QuireClient, budget: Budget): Promise<LoadResult> {
  progress("reads: /healthz floor");
  return runLoad({
    label: "healthz",
    concurrency: 1,
    warmup: 20,
    ...budget,
    // /healthz is a meta route, outside the typed tables: the one untyped call.
    send: async () => {
      await q.getPath("/healthz");
    },
  });
}
