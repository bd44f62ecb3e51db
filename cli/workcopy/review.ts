import { isUtf8 } from "node:buffer";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createTwoFilesPatch } from "diff";
import type { MergeResponse } from "../../shared/api/review.ts";
import { type DocumentDiff, diffDocuments } from "../../shared/documents/changes.ts";
import type { DocumentConflict } from "../../shared/documents/merge/result.ts";
import { type Copy, type MoveResult, moveTo } from "./copy.ts";
import { CopyError } from "./meta.ts";
import { type Remote, RemoteError } from "./remote.ts";
import { scan } from "./scan.ts";

export interface PolicyRow {
  name: string;
  pass: boolean;
  reason: string;
}
export interface ConflictRow {
  path: string;
  main_version_id: string | null;
  branch_version_id: string | null;
  /** How the server tried to merge the file (`json`, `yaml`, `text`, `file`…), docs/merge.md. */
  merge?: string;
  /** Each place inside the file both sides changed differently, with base, ours (main), theirs. */
  paths?: DocumentConflict[];
}

/**
 * A unified diff as git prints one: no `Index:` and `====` lines (the diff package's), and
 * `/dev/null` as the old name of an added file and the new name of a deleted one.
 */
function gitStyle(patch: string, status: "added" | "modified" | "deleted", file: string): string {
  return patch
    .split("\n")
    .filter((l) => !l.startsWith("Index: ") && !/^={20,}$/.test(l))
    .map((l) =>
      status === "added" && l.startsWith("--- ")
        ? "--- /dev/null"
        : status === "deleted" && l.startsWith("+++ ")
          ? "+++ /dev/null"
          : l,
    )
    .join("\n")
    .replace(/^(?=--- )/, `diff --git a/${file} b/${file}\n`);
}

/** A unified diff of two versions of a file; binary files get one line saying so. */
export function patchOf(file: string, before: Buffer | null, after: Buffer | null): string {
  if ((before && !isUtf8(before)) || (after && !isUtf8(after))) return `Binary file ${file} differs\n`;
  const status = before === null ? "added" : after === null ? "deleted" : "modified";
  const patch = createTwoFilesPatch(
    `a/${file}`,
    `b/${file}`,
    before?.toString("utf8") ?? "",
    after?.toString("utf8") ?? "",
    "",
    "",
    { context: 3 },
  );
  return gitStyle(patch, status, file);
}

export interface DiffEntry {
  path: string;
  status: "added" | "modified" | "deleted";
  patch: string;
  /** A JSON or YAML file's changed places, as `GET diff` gives them (docs/api.md). */
  structure?: DocumentDiff;
}

/** The changed places of a JSON or YAML file whose sides are text and parse, as the server finds them. */
function structureOf(file: string, before: Buffer | null, after: Buffer | null): DocumentDiff | null {
  if ((before && !isUtf8(before)) || (after && !isUtf8(after))) return null;
  return diffDocuments(file, before?.toString("utf8") ?? null, after?.toString("utf8") ?? null);
}

/** The copy's local changes as patches against the files at the copy's sequence. */
export async function localDiff(copy: Copy, remote: Remote, paths: string[]): Promise<DiffEntry[]> {
  const { repo, branch, sequence } = copy.config;
  const { changes } = await scan(copy.root, copy.index);
  const wanted =
    paths.length === 0
      ? changes
      : changes.filter((c) =>
          paths.some((p) => c.path === p || c.path.startsWith(`${p.replace(/\/$/, "")}/`)),
        );
  return Promise.all(
    wanted.map(async (c) => {
      const before = c.status === "added" ? null : await remote.file(repo, c.path, branch, sequence);
      const after = c.status === "deleted" ? null : await readFile(path.join(copy.root, c.path));
      const structure = structureOf(c.path, before, after);
      const entry = { path: c.path, status: c.status, patch: patchOf(c.path, before, after) };
      return structure ? { ...entry, structure } : entry;
    }),
  );
}

/** A branch's changes against `main` at its base, as the server computes them, with its conflicts. */
export async function branchDiff(repo: string, remote: Remote, branch: string) {
  if (branch === "main")
    throw new CopyError("main has nothing to diff against", "give a branch: quire diff --branch <name>");
  const d = await remote.diff(repo, branch);
  return {
    changes: d.changes.map(
      (c): DiffEntry => ({
        path: c.path,
        status: c.status,
        patch: c.diff
          ? gitStyle(c.diff, c.status, c.path)
          : c.binary
            ? `Binary file ${c.path} differs\n`
            : "",
        ...(c.structure ? { structure: c.structure } : {}),
      }),
    ),
    conflicts: d.conflicts as ConflictRow[],
  };
}

export type MergeOutcome =
  | { outcome: "merged"; result: MergeResponse }
  | { outcome: "denied"; policies: PolicyRow[]; message: string }
  | { outcome: "conflict"; conflicts: ConflictRow[]; message: string };

/** Merges the copy's branch into main (or forecasts it with `dryRun`); refusals are outcomes, not errors. */
export async function merge(copy: Copy, remote: Remote, dryRun: boolean): Promise<MergeOutcome> {
  const { repo, branch } = copy.config;
  if (branch === "main")
    throw new CopyError(
      "this copy is on main, which merges into nothing",
      "switch to a branch first: quire switch <branch>",
    );
  try {
    return { outcome: "merged", result: await remote.merge(repo, branch, dryRun) };
  } catch (e) {
    if (!(e instanceof RemoteError)) throw e;
    if (e.code === "POLICY_DENIED")
      return {
        outcome: "denied",
        policies: e.body["policies"] as PolicyRow[],
        message: String(e.body["error"]),
      };
    if (e.code === "MERGE_CONFLICT")
      return {
        outcome: "conflict",
        conflicts: e.body["conflicts"] as ConflictRow[],
        message: String(e.body["error"]),
      };
    if (e.code === "BRANCH_DRAFT")
      throw new CopyError(
        `'${branch}' is a draft${dryRun ? ": a merge now would be refused" : ""}`,
        `mark it ready first: quire branches ready ${repo} ${branch}`,
      );
    throw e;
  }
}

export type RebaseOutcome =
  | {
      outcome: "rebased";
      base_sequence: number;
      head_sequence: number;
      commits_replayed: number;
      copy?: MoveResult;
      pullError?: string;
    }
  | { outcome: "conflict"; conflicts: ConflictRow[]; message: string };

/** Rebases the copy's branch onto main's head, then brings the copy to the new head. */
export async function rebase(copy: Copy, remote: Remote): Promise<RebaseOutcome> {
  const { repo, branch } = copy.config;
  if (branch === "main")
    throw new CopyError("main cannot be rebased", "switch to a branch first: quire switch <branch>");
  let r: Awaited<ReturnType<Remote["rebase"]>>;
  try {
    r = await remote.rebase(repo, branch);
  } catch (e) {
    if (e instanceof RemoteError && e.code === "REBASE_CONFLICT")
      return {
        outcome: "conflict",
        conflicts: e.body["conflicts"] as ConflictRow[],
        message: String(e.body["error"]),
      };
    throw e;
  }
  const done = {
    outcome: "rebased",
    base_sequence: r.new_base_sequence,
    head_sequence: r.new_head_sequence,
    commits_replayed: r.commits_replayed,
  } as const;
  try {
    return {
      ...done,
      copy: await moveTo(copy, remote, branch, r.new_head_sequence, "updating the copy after the rebase"),
    };
  } catch (e) {
    if (e instanceof CopyError) return { ...done, pullError: e.message };
    throw e;
  }
}

export interface ResolveResult {
  resolved: { path: string; took: "main" | "branch" }[];
  remaining: ConflictRow[];
  /** The commits written on the branch, in order. */
  commits: number[];
  rebased: boolean;
  copy?: MoveResult;
}

/**
 * Settles conflicts of the copy's branch with main by taking one side for the given paths (all
 * conflicted paths when none are given). The server has no resolve endpoint, so this is done with
 * the operations it has, each atomic on its own:
 *
 * 1. one commit on the branch puts each path back to its content at the branch's base, which
 *    removes it from the branch's net changes and so from the conflicts;
 * 2. when no conflict remains, the branch is rebased onto main's head (now `main`'s side is in
 *    the branch);
 * 3. for `take: "branch"`, one more commit writes the branch's content of those paths again on
 *    top of main's.
 *
 * `take: "branch"` needs step 2, so it must cover every remaining conflict (else it is refused
 * before anything is written). Every commit is conditional on the head it saw.
 */
export async function resolve(
  copy: Copy,
  remote: Remote,
  opts: { paths: string[]; take: "main" | "branch" },
): Promise<ResolveResult> {
  const { repo, branch } = copy.config;
  if (branch === "main")
    throw new CopyError(
      "main has no conflicts to resolve",
      "switch to the conflicted branch: quire switch <branch>",
    );
  const { changes } = await scan(copy.root, copy.index);
  if (changes.length > 0)
    throw new CopyError(
      "the copy has uncommitted changes",
      "commit them first (`quire commit -m …`), then resolve",
    );
  const { conflicts } = await remote.diff(repo, branch);
  if (conflicts.length === 0)
    throw new CopyError(`'${branch}' has no conflicts with main`, "merge it: quire merge");
  const conflicted = new Set(conflicts.map((c) => c.path));
  const paths = opts.paths.length === 0 ? [...conflicted] : opts.paths;
  const unknown = paths.filter((p) => !conflicted.has(p));
  if (unknown.length > 0)
    throw new CopyError(
      `not in conflict: ${unknown.join(", ")}`,
      `the conflicted paths are: ${[...conflicted].join(", ")}`,
    );
  const remaining = conflicts.filter((c) => !paths.includes(c.path));
  if (opts.take === "branch" && remaining.length > 0)
    throw new CopyError(
      `taking the branch's side needs a rebase, which the other conflicts block: ${remaining.map((c) => c.path).join(", ")}`,
      "resolve them in the same call (list them too, or give no path for all), or take main's side for them first",
    );
  const info = await remote.branch(repo, branch);
  // The branch's own side, kept to be written again after the rebase.
  const ours = new Map(
    await Promise.all(
      paths.map(async (p) => [p, await remote.file(repo, p, branch, info.head_sequence)] as const),
    ),
  );
  const atBase = await Promise.all(
    paths.map(async (p) => ({ path: p, bytes: await remote.file(repo, p, "main", info.base_sequence) })),
  );
  const commits: number[] = [];
  const back = await remote.commit(repo, {
    branch,
    message: `Resolve conflicts with main: take ${opts.take === "main" ? "main's" : "the branch's"} side of ${paths.length} file(s)`,
    files: atBase.map((f) => ({ path: f.path, content: f.bytes ? f.bytes.toString("base64") : null })),
    expected_head_sequence: info.head_sequence,
  });
  commits.push(back.sequence);
  let head = back.sequence;
  let rebased = false;
  if (remaining.length === 0) {
    const r = await remote.rebase(repo, branch);
    head = r.new_head_sequence;
    rebased = true;
    // Only paths where the branch's side differs from main's need writing again.
    const differing = [];
    for (const p of opts.take === "branch" ? paths : []) {
      const mine = ours.get(p) ?? null;
      const theirs = await remote.file(repo, p, branch, head);
      if (mine === null ? theirs !== null : theirs === null || !mine.equals(theirs)) differing.push(p);
    }
    if (differing.length > 0) {
      const again = await remote.commit(repo, {
        branch,
        message: `Resolve conflicts with main: keep the branch's side of ${differing.length} file(s)`,
        files: differing.map((p) => ({ path: p, content: ours.get(p)?.toString("base64") ?? null })),
        expected_head_sequence: head,
      });
      commits.push(again.sequence);
      head = again.sequence;
    }
  }
  const moved = await moveTo(copy, remote, branch, head, "updating the copy after resolving");
  return {
    resolved: paths.map((p) => ({ path: p, took: opts.take })),
    remaining,
    commits,
    rebased,
    copy: moved,
  };
}
