import type {
  ChainResponse,
  CommitResponse,
  DiffResponse,
  FileResponse,
  TreeResponse,
} from "../../shared/api/content.ts";
import type { BranchListResponse, BranchResponse } from "../../shared/api/repos.ts";
import type { MergeResponse, RebaseResponse } from "../../shared/api/review.ts";
import { errorBodyOf, QuireApiError, type QuireClient } from "../client/index.ts";

/*
 * The few calls of the API a working copy makes, typed by the server's own wire schemas
 * (shared/api/), carried by the typed client (cli/client/). Kept behind this small interface so
 * the working copy's logic reads as what it needs, and tests could give it another carrier.
 */

export type TreeEntry = TreeResponse["entries"][number];
export type ChainEntry = ChainResponse["commits"][number];
export type Branch = BranchResponse;

/** An error answer of the server: its status, `code` and whole body (conflicts, policies…). */
export { QuireApiError as RemoteError } from "../client/index.ts";

export interface FileChangeOut {
  path: string;
  /** base64; null deletes the file. */
  content: string | null;
}

export interface Remote {
  readonly server: string;
  branch(repo: string, branch: string): Promise<Branch>;
  branches(repo: string, query: Record<string, string>): Promise<BranchListResponse["branches"]>;
  createBranch(repo: string, name: string): Promise<unknown>;
  /** Every entry of the tree at (branch, at), all pages. */
  tree(repo: string, branch: string, at: number): Promise<TreeEntry[]>;
  /** The file's bytes at (branch, at), or null when absent there. */
  file(repo: string, path: string, branch: string, at: number): Promise<Buffer | null>;
  /** The `.tar.gz` of the tree at (branch, at), as a stream. */
  archive(repo: string, branch: string, at: number): Promise<ReadableStream<Uint8Array>>;
  commit(
    repo: string,
    body: { branch: string; message: string; files: FileChangeOut[]; expected_head_sequence?: number },
    /** `Idempotency-Key`, `If-Match` (docs/api.md, "Safe retries"). */
    headers?: Record<string, string>,
  ): Promise<{ sequence: number }>;
  getCommit(repo: string, sequence: number): Promise<CommitResponse>;
  diff(repo: string, branch: string): Promise<DiffResponse>;
  chain(repo: string, from: number, to: number): Promise<ChainEntry[]>;
  merge(repo: string, branch: string, dryRun: boolean): Promise<MergeResponse>;
  rebase(repo: string, branch: string): Promise<RebaseResponse>;
}

/**
 * A file path in a URL (docs/names.md): each segment percent-encoded, a `-` segment as `%2D`, and
 * the `/` before a last segment `history` as `%2F` so it is not read as the history route.
 */
export function encodeFilePath(path: string): string {
  const segs = path.split("/").map((s) => (s === "-" ? "%2D" : encodeURIComponent(s)));
  if (segs.length > 1 && segs[segs.length - 1] === "history") {
    const last = segs.pop();
    return `${segs.join("/")}%2F${last}`;
  }
  return segs.join("/");
}

const TREE_PAGE = 1000;
const CHAIN_SPAN = 1000;

/**
 * The Remote over the typed client. File reads are the one call made by hand: a file path may
 * have a `-` segment or end in `history` (docs/names.md), which `encodeFilePath` sends as the
 * server needs and the client's generic path filling refuses.
 */
export function clientRemote(
  client: QuireClient,
  token: () => Promise<string | null>,
  devIdentity?: string,
): Remote {
  const repoParams = (repo: string) => ({ params: { repo } });
  const fileUrl = (repo: string, path: string, query: URLSearchParams) =>
    `${client.server.replace(/\/+$/, "")}/repos/${repo.split("/").map(encodeURIComponent).join("/")}/-/file/${encodeFilePath(path)}?${query}`;
  return {
    server: client.server,
    branch: (repo, branch) => client.get("/repos/:repo*/-/branch/:branch*", { params: { repo, branch } }),
    branches: async (repo, query) =>
      (await client.get("/repos/:repo*/-/branches", { ...repoParams(repo), query })).branches,
    createBranch: (repo, name) =>
      client.post("/repos/:repo*/-/branch", { ...repoParams(repo), body: { name } }),
    async tree(repo, branch, at) {
      const all: TreeEntry[] = [];
      for await (const e of client.tree(repo, { branch, at, pageSize: TREE_PAGE })) all.push(e as TreeEntry);
      return all;
    },
    async file(repo, path, branch, at) {
      const t = await token();
      const res = await fetch(fileUrl(repo, path, new URLSearchParams({ branch, at: String(at) })), {
        headers: {
          ...(t ? { authorization: `Bearer ${t}` } : {}),
          // `quire --as` on a development server (docs/cli.md), as the typed client sends it.
          ...(devIdentity ? { "x-quire-dev-identity": devIdentity } : {}),
        },
      });
      if (res.ok) return Buffer.from(((await res.json()) as FileResponse).content, "base64");
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      const error = errorBodyOf(res.status, body);
      if (res.status === 404 && error.code === "FILE_NOT_FOUND") return null;
      throw new QuireApiError("GET", `/repos/${repo}/-/file/${path}`, res.status, error);
    },
    async archive(repo, branch, at) {
      const res = await client.download("/repos/:repo*/-/archive", { repo }, { branch, at });
      if (!res.body) throw new Error("the archive answer had no body");
      return res.body;
    },
    commit: (repo, body, headers) =>
      client.post("/repos/:repo*/-/commit", { ...repoParams(repo), body, ...(headers ? { headers } : {}) }),
    getCommit: (repo, sequence) =>
      client.get("/repos/:repo*/-/commit/:sequence", { params: { repo, sequence: String(sequence) } }),
    diff: (repo, branch) => client.get("/repos/:repo*/-/diff", { ...repoParams(repo), query: { branch } }),
    async chain(repo, from, to) {
      const all: ChainEntry[] = [];
      for (let start = from; start <= to; start += CHAIN_SPAN) {
        const end = Math.min(to, start + CHAIN_SPAN - 1);
        const page = await client.get("/repos/:repo*/-/chain", {
          ...repoParams(repo),
          query: { from: String(start), to: String(end) },
        });
        all.push(...page.commits);
      }
      return all;
    },
    merge: (repo, branch, dryRun) =>
      client.post("/repos/:repo*/-/merge", { ...repoParams(repo), body: { branch, dry_run: dryRun } }),
    rebase: (repo, branch) =>
      client.post("/repos/:repo*/-/rebase", { ...repoParams(repo), body: { branch } }),
  };
}
