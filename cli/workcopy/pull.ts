import { readFile } from "node:fs/promises";
import path from "node:path";
import { type Copy, type MoveResult, settle } from "./copy.ts";
import { hasConflictMarkers, isText, merge3 } from "./merge3.ts";
import {
  CopyError,
  type IndexEntry,
  type PullConflict,
  readConflicts,
  refuseUnresolved,
  writeConflicts,
} from "./meta.ts";
import type { Branch, Remote } from "./remote.ts";
import { type LocalChange, scan, sha256Hex } from "./scan.ts";
import { applySync, clashes, planSync, type SyncPlan, treeMap, writeMerged } from "./sync.ts";

/*
 * `quire pull` as git merges: files only the remote changed are fetched, files only the copy
 * changed are kept, and a file both changed is merged three ways per line (base: the version the
 * copy last synced; ours: the local file; theirs: the branch head's). What cannot merge is left
 * with conflict markers (or, for binaries and deletions, as one side) and recorded in
 * `.quire/conflicts.json` until `quire resolve`.
 */

export interface PullResult extends MoveResult {
  /** The branch's state on the server: a merged or abandoned branch takes no more commits. */
  status: Branch["status"];
  /** Paths changed on both sides whose changes merged cleanly. */
  merged: string[];
  conflicts: PullConflict[];
}

interface Sides {
  base: Buffer | null;
  ours: Buffer | null;
  theirs: Buffer | null;
  theirsVersion: string | undefined;
}

/** One path both sides changed: what is written, what the index records, and any conflict. */
async function mergeOne(
  copy: Copy,
  change: LocalChange,
  sides: Sides,
  label: string,
  files: Map<string, IndexEntry>,
): Promise<PullConflict | "merged" | "same"> {
  const { base, ours, theirs, theirsVersion } = sides;
  const rel = change.path;
  const conflict = (kind: PullConflict["kind"]): PullConflict => ({ path: rel, kind, remote: label });
  // The index records the remote side: what is on disk beyond it shows as a local change.
  const recordTheirs = () => {
    if (theirs && theirsVersion) files.set(rel, [theirsVersion, theirs.length, 0]);
    else files.delete(rel);
  };
  if (ours === null ? theirs === null : theirs !== null && ours.equals(theirs)) {
    if (theirs === null) files.delete(rel);
    else files.set(rel, await writeMerged(copy.root, rel, theirs));
    return "same";
  }
  if (ours === null) {
    // As git: the remote's version is left in the tree; delete it again to keep the deletion.
    if (theirs) await writeMerged(copy.root, rel, theirs);
    recordTheirs();
    return conflict("deleted locally, changed remotely");
  }
  recordTheirs();
  if (theirs === null) return conflict("changed locally, deleted remotely");
  if (![base, ours, theirs].every((b) => b === null || isText(b))) return conflict("binary, both changed");
  const m = merge3(base?.toString("utf8") ?? "", ours.toString("utf8"), theirs.toString("utf8"), label);
  await writeMerged(copy.root, rel, Buffer.from(m.text));
  return m.conflicts > 0 ? conflict("both changed") : "merged";
}

/** The remote's bytes of `rel` at (branch, at), checked against the version the tree names. */
async function fetchVersion(
  remote: Remote,
  where: { repo: string; branch: string; at: number },
  rel: string,
  version: string | undefined,
): Promise<Buffer | null> {
  if (version === undefined) return null;
  const bytes = await remote.file(where.repo, rel, where.branch, where.at);
  if (bytes === null || sha256Hex(bytes) !== version)
    throw new CopyError(`'${rel}' changed on the server while pulling; nothing more was merged`, "try again");
  return bytes;
}

/** The three sides of each path both changed, in the order of `both`. */
async function eachSides(
  copy: Copy,
  remote: Remote,
  both: LocalChange[],
  where: { repo: string; branch: string; at: number },
  target: Map<string, string>,
): Promise<Sides[]> {
  // The base is what the copy last synced: its own branch at its own sequence.
  const synced = { repo: copy.config.repo, branch: copy.config.branch, at: copy.config.sequence };
  const out: Sides[] = [];
  for (const change of both) {
    out.push({
      base: await fetchVersion(remote, synced, change.path, copy.index.files.get(change.path)?.[0]),
      ours: change.status === "deleted" ? null : await readFile(path.join(copy.root, change.path)),
      theirs: await fetchVersion(remote, where, change.path, target.get(change.path)),
      theirsVersion: target.get(change.path),
    });
  }
  return out;
}

/** Brings the copy to its branch's head, merging local changes with the remote's. */
export async function pull(copy: Copy, remote: Remote): Promise<PullResult> {
  await refuseUnresolved(copy.root, "pull");
  const info = await remote.branch(copy.config.repo, copy.config.branch);
  return mergeTo(copy, remote, info);
}

/**
 * Switches the copy to `branch`'s head carrying local changes along, merged three ways with that
 * branch's files where both differ (`quire switch --merge`, as `git switch --merge`).
 */
export async function switchMerging(copy: Copy, remote: Remote, branch: string): Promise<PullResult> {
  await refuseUnresolved(copy.root, "switch");
  return mergeTo(copy, remote, await remote.branch(copy.config.repo, branch));
}

/** Moves the copy to the head of the branch `info` describes, merging local changes into it. */
async function mergeTo(copy: Copy, remote: Remote, info: Branch): Promise<PullResult> {
  const { repo, sequence: from } = copy.config;
  const branch = info.name;
  const head = info.head_sequence;
  const { changes } = await scan(copy.root, copy.index);
  const target = await treeMap(remote, { repo, branch, at: head }, copy.onSkip);
  const plan = planSync(copy.index.files, target);
  const both = clashes(plan, changes);
  const bothPaths = new Set(both.map((c) => c.path));
  const plain: SyncPlan = {
    write: new Map([...plan.write].filter(([p]) => !bothPaths.has(p))),
    remove: plan.remove.filter((p) => !bothPaths.has(p)),
  };
  const where = { repo, branch, at: head };
  // Every side is fetched before anything is written: a failed download leaves the copy as it was.
  const sides = await eachSides(copy, remote, both, where, target);
  const files = await applySync(copy.root, remote, where, copy.index, plain, copy.onProgress);
  const label = `${branch}@${head}`;
  const merged: string[] = [];
  const conflicts: PullConflict[] = [];
  for (const [i, change] of both.entries()) {
    const r = await mergeOne(copy, change, sides[i] as Sides, label, files);
    if (r === "merged") merged.push(change.path);
    else if (r !== "same") conflicts.push(r);
  }
  await writeConflicts(copy.root, conflicts);
  await settle(copy, files, { branch, sequence: head });
  const kept = changes.length - both.length;
  return {
    branch,
    from,
    sequence: head,
    written: plain.write.size,
    removed: plain.remove.length,
    kept,
    status: info.status,
    merged,
    conflicts,
  };
}

/**
 * Clears recorded conflicts of `paths` (all when none), refusing a text file that still holds
 * conflict markers: the commit would carry them.
 */
export async function markResolved(copy: Copy, paths: string[]): Promise<PullConflict[]> {
  const open = await readConflicts(copy.root);
  if (open.length === 0) return [];
  const chosen = paths.length === 0 ? open : open.filter((c) => paths.includes(c.path));
  const unknown = paths.filter((p) => !open.some((c) => c.path === p));
  if (unknown.length > 0)
    throw new CopyError(
      `not in conflict: ${unknown.join(", ")}`,
      `the paths in conflict are: ${open.map((c) => c.path).join(", ")}`,
    );
  const marked: string[] = [];
  for (const c of chosen) {
    const text = await readFile(path.join(copy.root, c.path), "utf8").catch(() => "");
    if (hasConflictMarkers(text)) marked.push(c.path);
  }
  if (marked.length > 0)
    throw new CopyError(
      `still holding conflict markers: ${marked.join(", ")}`,
      "edit them to the content you want (remove the `<<<<<<<`, `=======` and `>>>>>>>` lines), then resolve again",
    );
  await writeConflicts(
    copy.root,
    open.filter((c) => !chosen.includes(c)),
  );
  return chosen;
}
