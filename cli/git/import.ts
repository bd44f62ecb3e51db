import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { filePathProblem, unwritablePathProblem } from "../../shared/api/path-rules.ts";
import { QuireApiError } from "../client/index.ts";
import { CliError } from "../errors.ts";
import { MAX_COMMIT_FILES } from "../workcopy/copy.ts";
import type { FileChangeOut, Remote } from "../workcopy/remote.ts";
import { BlobReader, diffTrees, emptyTree, type GitCommit, listCommits, type TreeChange } from "./git.ts";
import { trailer, withTrailers } from "./trailers.ts";

/*
 * `quire import-git` (docs/git.md): a git branch's history as Quire commits. Each Quire commit
 * holds exactly the tree of the git commit it came from (the diff from the previous imported
 * commit's tree), less what Quire cannot store, which is reported. The branch head's trailers
 * say where an interrupted import resumes; each request carries an Idempotency-Key made from the
 * git commit, its part and the expected head, and `If-Match` with that head.
 */

/**
 * Raw bytes of file content per request, unless `--part-size` says otherwise. A part is cut
 * before it passes this (16 MiB, 21 MiB as base64) so a request stays inside the server's default
 * 32 MiB body (docs/names.md); a file larger than this goes alone in its part. A server with a
 * lower limit answers 413 and the import cuts smaller (`sendPart`).
 */
export const DEFAULT_PART_BYTES = 16 << 20;
/** The largest file one request can carry at the default body limit: base64 of 23 MiB, plus JSON. */
const MAX_IMPORT_FILE_BYTES = 23 << 20;
const MAX_MESSAGE_CHARS = 60_000;
const ATTEMPTS = 5;

export type ImportMode = "replay" | "squash";

export interface ImportOptions {
  /** The git repository's folder. */
  gitDir: string;
  /** The git branch (or any revision) to read. */
  from: string;
  repo: string;
  branch: string;
  mode: ImportMode;
  /** Import into a `main` that already has commits of its own. */
  intoMain: boolean;
  /** Raw bytes of file content per commit request at first (DEFAULT_PART_BYTES unless given). */
  partBytes?: number;
  /** A note for each path left out, each commit made, and where the import resumed. */
  note(line: string): void;
  verbose: boolean;
  /** Called after each git commit: how many of this run's are done. */
  progress?(done: number, total: number): void;
}

/** A path the import did not store, and why: reported, never silently dropped. */
export interface LeftOut {
  path: string;
  reason: string;
  git_commit: string;
}

export interface ImportResult {
  repo: string;
  branch: string;
  mode: ImportMode;
  git_head: string;
  /** Quire commits made by this run. */
  commits: number;
  /** Git commits of this run that changed nothing Quire stores (empty, a mode, a symlink…). */
  unchanged: number;
  resumed_after: string | null;
  head_sequence: number;
  left_out: LeftOut[];
}

/** One Quire commit to be: the git commit whose tree it brings, from which tree. */
interface Step {
  commit: GitCommit;
  baseTree: string;
}

type Action = { path: string; blob: string | null; size: number };

const isFile = (mode: string) => mode.startsWith("100");
const short = (sha: string) => sha.slice(0, 10);

/**
 * Where the branch head says an earlier run stopped: after part `part` of `sha`, which had
 * written the commit's first `files` of `total` file changes (`Git-Files`). A head from before
 * `Git-Files` says only `Git-Part: i/n`: its parts were cut at DEFAULT_PART_BYTES.
 */
interface Landed {
  sha: string;
  part: number;
  parts: number;
  files?: { done: number; total: number };
}

function landedIn(message: string): Landed | undefined {
  const sha = trailer(message, "Git-Commit");
  if (!sha || !/^[0-9a-f]{40,64}$/.test(sha)) return undefined;
  const [part = 1, parts = 1] = (trailer(message, "Git-Part") ?? "1/1").split("/").map(Number);
  const [done, total] = (trailer(message, "Git-Files") ?? "").split("/").map(Number);
  const files = done !== undefined && total !== undefined && done <= total ? { done, total } : undefined;
  return { sha, part, parts, ...(files ? { files } : {}) };
}

/** Whether the commit `landed` names is fully written. */
const landedWhole = (l: Landed) => (l.files ? l.files.done >= l.files.total : l.part >= l.parts);

/**
 * The branch's head and what it says of an earlier import. A missing branch is created from
 * `main`. A branch with commits of its own that did not come from an import is refused, and so
 * is a `main` with commits of its own unless `intoMain`.
 */
async function startingPoint(
  remote: Remote,
  o: ImportOptions,
): Promise<{ head: number; landed: Landed | undefined }> {
  const branch = await remote.branch(o.repo, o.branch).catch(async (e: unknown) => {
    if (!(e instanceof QuireApiError) || e.code !== "BRANCH_NOT_FOUND" || o.branch === "main") throw e;
    await remote.createBranch(o.repo, o.branch);
    o.note(`created branch '${o.branch}' from main`);
    return remote.branch(o.repo, o.branch);
  });
  const head = branch.head_sequence;
  const ownCommits = o.branch === "main" ? head > 0 : head > branch.base_sequence;
  if (!ownCommits) return { head, landed: undefined };
  const landed = landedIn((await remote.getCommit(o.repo, head)).message);
  if (landed || o.intoMain) return { head, landed };
  if (o.branch === "main")
    throw new CliError(`'main' of ${o.repo} already has commits; refusing to import into it`, {
      hint: "import into a branch (`--branch import/git`) and merge it, or pass --into-main",
    });
  throw new CliError(
    `'${o.branch}' has commits that did not come from a git import (its head, ${head}, has no Git-Commit trailer)`,
    { hint: "import into a new branch: --branch <name>" },
  );
}

/** Replay: every non-merge commit, then the head when it is a merge (its tree may differ). */
function stepsOf(commits: GitCommit[], mode: ImportMode, empty: string): Step[] {
  const head = commits.at(-1);
  if (!head) return [];
  if (mode === "squash") return [{ commit: head, baseTree: empty }];
  const chosen = commits.filter((c) => c.parents <= 1);
  if (head.parents > 1) chosen.push(head);
  return chosen.map((commit, i) => ({ commit, baseTree: chosen[i - 1]?.tree ?? empty }));
}

/** Why Quire cannot store `path` (docs/names.md), or null. */
function pathProblem(path: string | null): string | null {
  if (path === null) return "its path is not valid UTF-8";
  const problem = filePathProblem(path) ?? unwritablePathProblem(path);
  return problem && `its path ${problem}`;
}

interface Classified {
  actions: Action[];
  leftOut: { path: string; reason: string }[];
}

/**
 * What one changed path of git becomes in Quire: a write, a deletion, or a path left out with
 * why. Whether the old version was stored is decided from the change alone (a regular file of a
 * writable path and size), so a resumed run decides as the first run did.
 */
async function classify(c: TreeChange, blobs: BlobReader, out: Classified): Promise<void> {
  const problem = pathProblem(c.path);
  const shown = c.path ?? c.rawPath;
  const storable = async (mode: string, blob: string) =>
    isFile(mode) && problem === null && (await blobs.size(blob)) <= MAX_IMPORT_FILE_BYTES;
  const oldStored = await storable(c.oldMode, c.oldBlob);
  if (isFile(c.newMode)) {
    if (problem !== null) out.leftOut.push({ path: shown, reason: problem });
    else if (!(await storable(c.newMode, c.newBlob)))
      out.leftOut.push({
        path: shown,
        reason: `${await blobs.size(c.newBlob)} bytes; one commit request carries at most ${MAX_IMPORT_FILE_BYTES}`,
      });
    // Only the mode changed (Quire keeps no modes): nothing to write.
    else if (oldStored && c.oldBlob === c.newBlob) return;
    else return void out.actions.push({ path: shown, blob: c.newBlob, size: await blobs.size(c.newBlob) });
  } else if (c.newMode === "120000") {
    const target = (await blobs.read(c.newBlob)).toString("utf8");
    out.leftOut.push({ path: shown, reason: `a symbolic link (to '${target}'); Quire stores no links` });
  } else if (c.newMode === "160000") {
    out.leftOut.push({
      path: shown,
      reason: `a submodule (commit ${short(c.newBlob)}); Quire has no submodules: import that repository on its own`,
    });
  }
  // The path holds nothing Quire stores now: the version stored before goes.
  if (oldStored) out.actions.push({ path: shown, blob: null, size: 0 });
}

/** How big a part may be: file changes, and raw bytes of content. */
interface PartSize {
  files: number;
  bytes: number;
}

/** The actions cut into parts of at most `size.files` changes and about `size.bytes` of content. */
function partsOf(actions: Action[], size: PartSize): Action[][] {
  const parts: Action[][] = [];
  let bytes = 0;
  for (const a of actions) {
    const last = parts.at(-1);
    if (!last || last.length >= size.files || (bytes + a.size > size.bytes && last.length > 0)) {
      parts.push([a]);
      bytes = a.size;
    } else {
      last.push(a);
      bytes += a.size;
    }
  }
  return parts;
}

/** Where a part sits in its git commit: its number, the count planned, the file changes written after it. */
interface PartPlace {
  part: number;
  parts: number;
  done: number;
  total: number;
}

function messageOf(step: Step, o: ImportOptions, at: PartPlace): string {
  const c = step.commit;
  const text =
    o.mode === "squash"
      ? `Import ${o.from} of a git repository at ${short(c.sha)}`
      : c.message.length > MAX_MESSAGE_CHARS
        ? `${c.message.slice(0, MAX_MESSAGE_CHARS)}\n[message cut by the import]`
        : c.message;
  return withTrailers(text, [
    ["Git-Commit", c.sha],
    ["Git-Author", c.author],
    ["Git-Date", c.date],
    ...(o.mode === "squash" ? [["Git-Import", "squash"] as [string, string]] : []),
    ...(at.parts > 1
      ? [
          ["Git-Part", `${at.part}/${at.parts}`] as [string, string],
          ["Git-Files", `${at.done}/${at.total}`] as [string, string],
        ]
      : []),
  ]);
}

/** Whether sending the same request again may succeed: a lost answer, an outage, a key still held. */
const retryable = (e: unknown) =>
  !(e instanceof QuireApiError) || e.status >= 500 || e.code === "IDEMPOTENCY_IN_PROGRESS";

/** Sends one commit, retrying the same request (same key) when that is safe; null: nothing changed. */
async function sendCommit(
  remote: Remote,
  repo: string,
  body: { branch: string; message: string; files: FileChangeOut[] },
  headers: Record<string, string>,
  what: string,
): Promise<number | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await remote.commit(repo, body, headers)).sequence;
    } catch (e) {
      if (e instanceof QuireApiError && e.code === "EMPTY_COMMIT") return null;
      if (attempt < ATTEMPTS && retryable(e)) {
        await sleep(200 * 2 ** attempt);
        continue;
      }
      if (e instanceof QuireApiError && e.status === 412)
        throw new CliError(`'${body.branch}' moved while importing ${what}: someone else committed to it`, {
          hint: "nothing of that commit was written; rerun to resume if the new commits are the import's own, else import into a new branch",
        });
      throw e;
    }
  }
}

/**
 * Where this run starts in `steps`: after what the branch head says landed (the next part of a
 * cut commit, else the next commit), or at the start. A head from another history is refused,
 * unless `intoMain` says to import over it.
 */
function resumePoint(
  steps: Step[],
  landed: Landed | undefined,
  o: ImportOptions,
): { first: number; partial: Landed | undefined; after: Landed | undefined } {
  if (!landed) return { first: 0, partial: undefined, after: undefined };
  const at = steps.findIndex((s) => s.commit.sha === landed.sha);
  if (at === -1 && o.intoMain) return { first: 0, partial: undefined, after: undefined };
  if (at === -1)
    throw new CliError(
      `'${o.branch}' holds an import of git commit ${short(landed.sha)}, which is not one this import makes from '${o.from}'`,
      { hint: "import into a new branch: --branch <name>" },
    );
  const whole = landedWhole(landed);
  const first = whole ? at + 1 : at;
  o.note(`resuming after git commit ${short(landed.sha)} (${first} of ${steps.length} done)`);
  return { first, partial: whole ? undefined : landed, after: landed };
}

/** How far into its commit's file changes a partly written commit got: `Git-Files`, else by its old cut. */
function resumeIn(actions: Action[], partial: Landed | undefined): { done: number; part: number } {
  if (!partial) return { done: 0, part: 0 };
  if (partial.files) return { done: partial.files.done, part: partial.part };
  const old = partsOf(actions, { files: MAX_COMMIT_FILES, bytes: DEFAULT_PART_BYTES });
  return { done: old.slice(0, partial.part).flat().length, part: partial.part };
}

/** One run's state: the head it expects, what it made, what it reported. */
interface Run {
  remote: Remote;
  o: ImportOptions;
  blobs: BlobReader;
  /** Makes Idempotency-Keys of one repo and branch differ from another's. */
  scope: string;
  /** The part size now: smaller after a 413, and kept so for the rest of the run. */
  size: PartSize;
  head: number;
  made: number;
  unchanged: number;
  leftOut: LeftOut[];
  reported: Set<string>;
}

/** Reports each path left out, once per path and reason over the run. */
function report(run: Run, sha: string, found: Classified["leftOut"]): void {
  for (const l of found) {
    const key = `${l.path}\0${l.reason}`;
    if (run.reported.has(key)) continue;
    run.reported.add(key);
    run.leftOut.push({ ...l, git_commit: sha });
    run.o.note(`warning: left out '${l.path}' (git ${short(sha)}): ${l.reason}`);
  }
}

const contentBytes = (part: Action[]) => part.reduce((n, a) => n + a.size, 0);

/**
 * After a 413 for `part`: a size that cuts it in two (half its changes, half its content), or
 * null when it is one file, which no cut can shrink.
 */
function smallerThan(part: Action[]): PartSize | null {
  if (part.length <= 1) return null;
  return { files: Math.ceil(part.length / 2), bytes: Math.max(1, Math.floor(contentBytes(part) / 2)) };
}

/**
 * Makes the Quire commits of one step, after the first `resume.done` of its file changes; false
 * when none changed anything. The parts are cut at the run's size. A 413 writes nothing, so the
 * same changes are cut smaller and sent again, and the smaller size stays for the rest of the run;
 * each part's `Git-Files` says how many changes are written, so a resume does not depend on sizes.
 */
async function commitStep(
  run: Run,
  step: Step,
  actions: Action[],
  resume: { done: number; part: number },
): Promise<boolean> {
  const { o } = run;
  const sha = step.commit.sha;
  let { done, part } = resume;
  let changedAny = false;
  while (done < actions.length) {
    const planned = partsOf(actions.slice(done), run.size);
    const next = planned[0] ?? [];
    const at = {
      part: part + 1,
      parts: part + planned.length,
      done: done + next.length,
      total: actions.length,
    };
    const what = `git commit ${short(sha)}${at.parts > 1 ? ` (part ${at.part} of ${at.parts})` : ""}`;
    let sequence: number | null;
    try {
      sequence = await sendPart(run, step, next, at, what);
    } catch (e) {
      const smaller = e instanceof QuireApiError && e.status === 413 ? smallerThan(next) : undefined;
      if (smaller === undefined) throw e;
      if (smaller === null)
        throw new CliError(`${what} is over the server's request limit (SVC_MAX_BODY_BYTES)`, {
          hint: `one file of ${contentBytes(next)} bytes cannot be cut; the server's limit needs raising`,
        });
      run.size = smaller;
      o.note(
        `${what} is over the server's request limit; cutting parts at ${smaller.files} files and ${smaller.bytes} bytes`,
      );
      continue;
    }
    done = at.done;
    part = at.part;
    if (sequence === null) continue;
    run.head = sequence;
    run.made++;
    changedAny = true;
    if (o.verbose) o.note(`${what} → ${o.repo}@${sequence}`);
  }
  return changedAny;
}

/** Sends one part as one commit request; the new head, or null when it changed nothing. */
async function sendPart(run: Run, step: Step, part: Action[], at: PartPlace, what: string) {
  const { o } = run;
  const files = await Promise.all(
    part.map(async (a) => ({
      path: a.path,
      content: a.blob === null ? null : (await run.blobs.read(a.blob)).toString("base64"),
    })),
  );
  const body = { branch: o.branch, message: messageOf(step, o, at), files };
  const headers = {
    "idempotency-key": `git-import:${step.commit.sha}:${at.done}/${at.total}:${run.head}:${run.scope}`,
    "if-match": `"${run.head}"`,
  };
  return sendCommit(run.remote, o.repo, body, headers, what);
}

/** Imports `o.from` of the git repository at `o.gitDir` into `o.repo`'s `o.branch`. */
export async function importGit(remote: Remote, o: ImportOptions): Promise<ImportResult> {
  const commits = await listCommits(o.gitDir, o.from);
  const gitHead = commits.at(-1);
  if (!gitHead) throw new CliError(`'${o.from}' has no commits`);
  const steps = stepsOf(commits, o.mode, await emptyTree(o.gitDir));
  const start = await startingPoint(remote, o);
  const { first, partial, after } = resumePoint(steps, start.landed, o);
  const todo = steps.slice(first);
  const diffs = await diffTrees(
    o.gitDir,
    todo.map((s) => [s.baseTree, s.commit.tree]),
  );
  const run: Run = {
    remote,
    o,
    blobs: new BlobReader(o.gitDir),
    scope: createHash("sha256").update(`${o.repo}\0${o.branch}`).digest("hex").slice(0, 16),
    size: { files: MAX_COMMIT_FILES, bytes: o.partBytes ?? DEFAULT_PART_BYTES },
    head: start.head,
    made: 0,
    unchanged: 0,
    leftOut: [],
    reported: new Set(),
  };
  try {
    for (const [i, step] of todo.entries()) {
      const found: Classified = { actions: [], leftOut: [] };
      for (const change of diffs[i] ?? []) await classify(change, run.blobs, found);
      report(run, step.commit.sha, found.leftOut);
      const resume = resumeIn(found.actions, i === 0 ? partial : undefined);
      if (!(await commitStep(run, step, found.actions, resume))) {
        run.unchanged++;
        if (o.verbose)
          o.note(`git commit ${short(step.commit.sha)} changes nothing Quire stores; no commit made`);
      }
      o.progress?.(i + 1, todo.length);
    }
  } finally {
    run.blobs.close();
  }
  return {
    repo: o.repo,
    branch: o.branch,
    mode: o.mode,
    git_head: gitHead.sha,
    commits: run.made,
    unchanged: run.unchanged,
    resumed_after: after?.sha ?? null,
    head_sequence: run.head,
    left_out: run.leftOut,
  };
}
