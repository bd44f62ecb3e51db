import { createHash } from "node:crypto";
import type { BlobStore } from "../blobs/store.ts";
import type { BranchRow } from "../branches/branches.ts";
import type { Conflict, NetChange } from "../commits/changes.ts";
import { type Body, isBinary, loadSizedBodyUpTo } from "../commits/content.ts";
import { fileInView, viewOf } from "../commits/view.ts";
import type { WrittenChange } from "../commits/write.ts";
import type { Queryable } from "../db/pool.ts";
import {
  DEFAULT_MERGE_CONFIG,
  MAX_MERGE_CONFIG_BYTES,
  MERGE_CONFIG_PATH,
  type MergeConfig,
  type MergeConfigError,
  parseMergeConfig,
} from "../documents/merge/config.ts";
import {
  type DocumentConflict,
  type MergedAs,
  type MergeRule,
  mergeDocument,
} from "../documents/merge/index.ts";

/** Largest version merged by content; a file above it changed on both sides stays a file conflict. */
export const MAX_MERGED_BYTES = 8 * 1024 * 1024;

/**
 * A path both sides changed that did not merge: the spec's conflict, with how the merge was tried
 * (`file`: not by content, for a deletion, binary or oversized version, or a `file` rule) and each
 * place inside the file both sides changed differently (docs/merge.md).
 */
export interface FileConflict extends Conflict {
  merge: MergedAs;
  paths: DocumentConflict[];
}

/** A path both sides changed whose versions merged: the merged body to write. */
export interface MergedFile {
  path: string;
  body: Body;
}

export interface Resolution {
  merged: MergedFile[];
  conflicts: FileConflict[];
  /** The problems of an invalid `.svc/merge.yaml` (its files then conflict as whole files). */
  configErrors: MergeConfigError[];
  /** The rules the merge followed, for a rebase merging each replayed version. */
  config: MergeConfig;
}

/** The three versions of one path: `main` at the base, `main` now, the branch. Null: absent. */
export interface Versions {
  base: Buffer | null;
  ours: Buffer | null;
  theirs: Buffer | null;
}

/** What `.svc/merge.yaml` says on `main` at `sequence` (the branch's base). */
async function mergeConfigAt(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  main: BranchRow,
  sequence: number,
): Promise<{ config: MergeConfig; errors: MergeConfigError[] }> {
  const view = await viewOf(db, repoId, main, sequence);
  const version = await fileInView(db, view, MERGE_CONFIG_PATH);
  if (!version) return { config: DEFAULT_MERGE_CONFIG, errors: [] };
  const { data } = await loadSizedBodyUpTo(db, blobs, repoId, version.content_sha256, MAX_MERGE_CONFIG_BYTES);
  if (data === null)
    return fileLevel([{ message: `${MERGE_CONFIG_PATH}: larger than ${MAX_MERGE_CONFIG_BYTES} bytes` }]);
  const parsed = parseMergeConfig(data.toString("utf8"));
  return parsed.ok ? { config: parsed.config, errors: [] } : fileLevel(parsed.errors);
}

const FILE_LEVEL: MergeConfig = { ruleFor: () => ({ merge: "file" }) };
const fileLevel = (errors: MergeConfigError[]) => ({ config: FILE_LEVEL, errors });

/** The bytes of a version, or null when it is absent or too large to merge by content. */
async function load(db: Queryable, blobs: BlobStore, repoId: number, sha: Buffer | null) {
  if (sha === null) return { absent: true, data: null };
  const { data } = await loadSizedBodyUpTo(db, blobs, repoId, sha, MAX_MERGED_BYTES);
  return { absent: false, data };
}

/**
 * The merge of one path's versions by its rule: the merged text, or why it conflicts. A deletion
 * on either side, a binary version or one too large is a conflict of the whole file.
 */
export function mergeVersions(
  path: string,
  versions: Versions,
  rule: MergeRule,
): { content: Buffer } | { merge: MergedAs; paths: DocumentConflict[] } {
  const { base, ours, theirs } = versions;
  if (ours === null || theirs === null || [base, ours, theirs].some((v) => v !== null && isBinary(v)))
    return { merge: "file", paths: [] };
  const m = mergeDocument(
    path,
    base?.toString("utf8") ?? "",
    ours.toString("utf8"),
    theirs.toString("utf8"),
    rule,
  );
  return "content" in m ? { content: Buffer.from(m.content) } : { merge: m.merged_as, paths: m.conflicts };
}

/** A merged body, typed as the branch's version of the file is. */
export function mergedBody(data: Buffer, contentType: string | null): Body {
  return {
    data,
    sha256: createHash("sha256").update(data).digest(),
    contentType: contentType ?? "text/plain; charset=utf-8",
    binary: false,
  };
}

/**
 * Merges, by content, each path both `main` and the branch changed since the branch's base, under
 * the rules of `.svc/merge.yaml` on `main` at that base (so the branch cannot choose its own
 * rules). Only paths in conflict are read: a merge without conflicts reads nothing more.
 */
export async function resolveConflicts(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  main: BranchRow,
  baseSequence: number,
  changes: NetChange[],
  conflicts: Conflict[],
): Promise<Resolution> {
  if (conflicts.length === 0)
    return { merged: [], conflicts: [], configErrors: [], config: DEFAULT_MERGE_CONFIG };
  const { config, errors } = await mergeConfigAt(db, blobs, repoId, main, baseSequence);
  const byPath = new Map(changes.map((c) => [c.path, c]));
  const resolution: Resolution = { merged: [], conflicts: [], configErrors: errors, config };
  // One after another: `db` may be a transaction's client, which runs one query at a time.
  for (const conflict of conflicts) {
    const change = byPath.get(conflict.path);
    const rule = config.ruleFor(conflict.path);
    const outcome =
      change && rule.merge !== "file" ? await mergeOne(db, blobs, repoId, conflict, change, rule) : null;
    if (outcome && "content" in outcome)
      resolution.merged.push({
        path: conflict.path,
        body: mergedBody(outcome.content, change?.contentType ?? null),
      });
    else
      resolution.conflicts.push({
        ...conflict,
        merge: outcome?.merge ?? "file",
        paths: outcome?.paths ?? [],
      });
  }
  return resolution;
}

async function mergeOne(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  conflict: Conflict,
  change: NetChange,
  rule: MergeRule,
): Promise<ReturnType<typeof mergeVersions> | null> {
  const oursSha = conflict.main_version_id === null ? null : Buffer.from(conflict.main_version_id, "hex");
  const [base, ours, theirs] = [
    await load(db, blobs, repoId, change.mainSha),
    await load(db, blobs, repoId, oursSha),
    await load(db, blobs, repoId, change.branchSha),
  ];
  // A version too large to read is merged as a whole file.
  if ([base, ours, theirs].some((v) => !v.absent && v.data === null)) return null;
  return mergeVersions(conflict.path, { base: base.data, ours: ours.data, theirs: theirs.data }, rule);
}

/** A replayed commit's changes, as rebase.ts writes them. */
interface ReplayedChanges {
  changes: WrittenChange[];
}

/**
 * Gives the replayed commits of a rebase the merged versions of the paths both sides changed, as
 * git's rebase merges each commit it replays: the last commit touching such a path writes the
 * merged file; an earlier one writes its own version merged with `main`'s, or, when that does not
 * merge cleanly by itself, the final merged file. Answers the bodies to store.
 */
export async function mergeReplays(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  replays: ReplayedChanges[],
  resolution: Resolution,
  changes: NetChange[],
  conflicts: Conflict[],
): Promise<Body[]> {
  const bodies: Body[] = [];
  const byPath = new Map(changes.map((c) => [c.path, c]));
  const oursOf = new Map(conflicts.map((c) => [c.path, c.main_version_id]));
  for (const { path, body: final } of resolution.merged) {
    bodies.push(final);
    const touching = replays.flatMap((r) => r.changes.filter((c) => c.path === path));
    const last = touching.pop();
    if (last) Object.assign(last, { sha256: final.sha256, contentType: final.contentType, binary: false });
    const change = byPath.get(path);
    const oursId = oursOf.get(path);
    if (touching.length === 0 || !change || !oursId) continue;
    const base = await load(db, blobs, repoId, change.mainSha);
    const ours = await load(db, blobs, repoId, Buffer.from(oursId, "hex"));
    for (const written of touching) {
      const theirs = await load(db, blobs, repoId, written.sha256);
      const outcome = mergeVersions(
        path,
        { base: base.data, ours: ours.data, theirs: theirs.data },
        resolution.config.ruleFor(path),
      );
      const body = "content" in outcome ? mergedBody(outcome.content, written.contentType) : final;
      bodies.push(body);
      Object.assign(written, { sha256: body.sha256, contentType: body.contentType, binary: false });
    }
  }
  return bodies;
}
