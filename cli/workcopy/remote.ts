import type {
  ChainResponse,
  CommitResponse,
  DiffResponse,
  FileResponse,
  TreeResponse,
} from "../../shared/api/content.ts";
import type { BranchListResponse, BranchResponse } from "../../shared/api/repos.ts";
import type { RebaseResponse } from "../../shared/api/review.ts";

/*
 * The few calls of the API a working copy makes, typed by the server's own wire schemas
 * (shared/api/). Kept behind this small interface so the working copy's logic does not care which
 * HTTP client carries them.
 */

export type TreeEntry = TreeResponse["entries"][number];
export type ChainEntry = ChainResponse["commits"][number];
export type Branch = BranchResponse;

/** An error answer of the server: its status, `code` and whole body (conflicts, policies…). */
export class RemoteError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: Record<string, unknown>;
  constructor(status: number, body: Record<string, unknown>) {
    super(`${status} ${String(body["code"])}: ${String(body["error"])}`);
    this.name = "RemoteError";
    this.status = status;
    this.code = String(body["code"]);
    this.body = body;
  }
}

export interface FileChangeOut {
  path: string;
  /** base64; null deletes the file. */
  content: string | null;
}

export interface MergeOk {
  sequence: number;
  branch: string;
  merged_by: string;
  proposal_id: string | null;
  dry_run: boolean;
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
  ): Promise<CommitResponse>;
  getCommit(repo: string, sequence: number): Promise<CommitResponse>;
  diff(repo: string, branch: string): Promise<DiffResponse>;
  chain(repo: string, from: number, to: number): Promise<ChainEntry[]>;
  merge(repo: string, branch: string, dryRun: boolean): Promise<MergeOk>;
  rebase(repo: string, branch: string): Promise<RebaseResponse>;
}

/** A repo or branch name in a URL: its segments are letters, digits, `.`, `_`, `-` (docs/names.md). */
const names = (name: string) => name.split("/").map(encodeURIComponent).join("/");

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

/** The Remote over `fetch`, sending `Authorization: Bearer <token>` when there is one. */
export function httpRemote(server: string, token: () => Promise<string | null>): Remote {
  const base = server.replace(/\/+$/, "");
  const send = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const headers: Record<string, string> = {};
    const t = await token();
    if (t) headers["authorization"] = `Bearer ${t}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    return fetch(base + path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  };
  const json = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await send(method, path, body);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? {} : JSON.parse(text);
    } catch {
      parsed = { code: res.status >= 500 ? "SERVER_ERROR" : "HTTP_ERROR", error: text.slice(0, 200) };
    }
    if (!res.ok) throw new RemoteError(res.status, parsed as Record<string, unknown>);
    return parsed as T;
  };
  const r = (repo: string) => `/repos/${names(repo)}`;
  const q = (o: Record<string, string | number>) =>
    new URLSearchParams(Object.entries(o).map(([k, v]): [string, string] => [k, String(v)]));
  return {
    server: base,
    branch: (repo, branch) => json("GET", `${r(repo)}/-/branch/${names(branch)}`),
    branches: async (repo, query) =>
      (await json<BranchListResponse>("GET", `${r(repo)}/-/branches?${q(query)}`)).branches,
    createBranch: (repo, name) => json("POST", `${r(repo)}/-/branch`, { name }),
    async tree(repo, branch, at) {
      const all: TreeEntry[] = [];
      let after: string | undefined;
      for (;;) {
        const query = q({ branch, at, limit: TREE_PAGE, ...(after === undefined ? {} : { after }) });
        const page = await json<TreeResponse>("GET", `${r(repo)}/-/tree?${query}`);
        all.push(...page.entries);
        if (page.entries.length < TREE_PAGE) return all;
        after = page.entries[page.entries.length - 1]?.path;
      }
    },
    async file(repo, path, branch, at) {
      try {
        const f = await json<FileResponse>(
          "GET",
          `${r(repo)}/-/file/${encodeFilePath(path)}?${q({ branch, at })}`,
        );
        return Buffer.from(f.content, "base64");
      } catch (e) {
        if (e instanceof RemoteError && e.code === "FILE_NOT_FOUND") return null;
        throw e;
      }
    },
    async archive(repo, branch, at) {
      const res = await send("GET", `${r(repo)}/-/archive?${q({ branch, at })}`);
      if (!res.ok || !res.body)
        throw new RemoteError(res.status, (await res.json()) as Record<string, unknown>);
      return res.body;
    },
    commit: (repo, body) => json("POST", `${r(repo)}/-/commit`, body),
    getCommit: (repo, sequence) => json("GET", `${r(repo)}/-/commit/${sequence}`),
    diff: (repo, branch) => json("GET", `${r(repo)}/-/diff?${q({ branch })}`),
    async chain(repo, from, to) {
      const all: ChainEntry[] = [];
      for (let start = from; start <= to; start += CHAIN_SPAN) {
        const end = Math.min(to, start + CHAIN_SPAN - 1);
        all.push(
          ...(await json<ChainResponse>("GET", `${r(repo)}/-/chain?${q({ from: start, to: end })}`)).commits,
        );
      }
      return all;
    },
    merge: (repo, branch, dryRun) => json("POST", `${r(repo)}/-/merge`, { branch, dry_run: dryRun }),
    rebase: (repo, branch) => json("POST", `${r(repo)}/-/rebase`, { branch }),
  };
}
