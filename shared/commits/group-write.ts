import type { BranchRow } from "../branches/branches.ts";
import { firstRowOf, prepared } from "../db/pool.ts";
import type { Tx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { wakeDeliverers } from "../events/notify.ts";
import { nodeReader } from "../transparency/log.ts";
import { leafHash, type NodeReader, type NodeRef, nodesCompletedBy } from "../transparency/merkle.ts";
import { filesInView, newestChangeInView, type View } from "./view.ts";
import {
  type Allocated,
  chainedHash,
  eventOf,
  headView,
  refuseEmpty,
  refuseUnwritable,
  type WrittenChange,
  writeCommitRows,
} from "./write.ts";

/** One commit of a group from the API (commit.ts, groups.ts), in the group's order. */
export interface GroupMember {
  author: string;
  message: string;
  changes: WrittenChange[];
}

// Every commit of a group in one statement: the commits, their file changes, the branch's new head,
// the log nodes they complete, their `commit.created` events (in sequence order) with the outbox
// rows. `changed` answers the sequences of the commits that change something in the view at the
// group's start ($26 to $29), judged on the files no earlier commit of the group wrote ($14): the
// statement's snapshot does not see the rows it writes, so the group's own paths are judged in Node.
const commit_group_insert = prepared<{ changed: (string | number)[] }>(
  "commit_group_insert",
  `WITH
  commit AS (
    INSERT INTO commits (repo_id, sequence, branch_id, message, author, created_at, prev_hash, hash)
    SELECT $1, c.sequence, $2, c.message, c.author, $3, c.prev_hash, c.hash
    FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[])
      AS c (sequence, message, author, prev_hash, hash)),
  changes AS (
    INSERT INTO file_changes (branch_id, path, sequence, repo_id, content_sha256, content_type, is_binary)
    SELECT $2, c.path, c.sequence, $1, c.sha256, c.content_type, c.is_binary
    FROM unnest($9::bigint[], $10::text[], $11::bytea[], $12::text[], $13::boolean[])
      AS c (sequence, path, sha256, content_type, is_binary)),
  head AS (
    UPDATE branches SET head_sequence = $15, head_hash = $16, updated_at = now() WHERE id = $2),
  log AS (
    INSERT INTO tlog_nodes (repo_id, level, idx, hash)
    SELECT $1, n.level, n.idx, n.hash FROM unnest($17::smallint[], $18::bigint[], $19::bytea[]) AS n (level, idx, hash)),
  event AS (
    INSERT INTO events (id, type, source, repo, time, data)
    SELECT e.id, $20, $21, $22, e.time, e.data
    FROM unnest($23::uuid[], $24::timestamptz[], $25::jsonb[]) WITH ORDINALITY AS e (id, time, data, n)
    ORDER BY e.n
    RETURNING id, position),
  outbox AS (
    INSERT INTO webhook_outbox (subscription_id, event_id)
    SELECT s.id, event.id FROM subscriptions s, event
    WHERE (s.repo IS NULL OR s.repo = $22) AND (s.event_types IS NULL OR $20 = ANY (s.event_types))
    ORDER BY event.position),
  changed AS (
    SELECT coalesce(array_agg(DISTINCT w.sequence), '{}') AS changed
    FROM unnest($9::bigint[], $10::text[], $11::bytea[], $12::text[], $14::boolean[])
      AS w (sequence, path, sha256, content_type, unseen)
    LEFT JOIN ${newestChangeInView(
      {
        branch: "$2",
        at: "$26::bigint",
        parent: "$27::bigint",
        parentAt: "$28::bigint",
        ownFrom: "$29::bigint",
      },
      "w.path",
    )} ON true
    WHERE w.unseen AND (w.sha256 IS NULL OR v.content_sha256 IS DISTINCT FROM w.sha256
      OR v.content_type IS DISTINCT FROM w.content_type))
  SELECT changed FROM changed`,
);

/** The log's nodes a group has computed and not yet written, over the stored ones. */
function overlayReader(stored: NodeReader, pending: Map<string, Buffer>): NodeReader {
  const key = (n: NodeRef) => `${n.level}/${n.idx}`;
  return async (refs) => {
    const missing = refs.filter((n) => !pending.has(key(n)));
    const read = missing.length > 0 ? await stored(missing) : [];
    const got = new Map(missing.map((n, i) => [key(n), read[i] as Buffer]));
    return refs.map((n) => pending.get(key(n)) ?? (got.get(key(n)) as Buffer));
  };
}

const differs = (a: WrittenChange, b: WrittenChange) =>
  a.sha256 === null || b.sha256 === null || !a.sha256.equals(b.sha256) || a.contentType !== b.contentType;

/**
 * What the group's earlier commits did to each member's paths: for each change, the change an
 * earlier commit of the group made to that path, if any (refusing to delete a path one deleted);
 * and the deletions of paths the group has not touched, which the view must hold.
 */
function earlierInGroup(members: GroupMember[], branch: string) {
  const written = new Map<string, WrittenChange>();
  const unseenDeletions: string[] = [];
  const earlier = members.map((m) => {
    const before = m.changes.map((c) => {
      const b = written.get(c.path);
      if (b?.sha256 === null && c.sha256 === null) refuseMissingDeletion(c.path, branch);
      if (b === undefined && c.sha256 === null) unseenDeletions.push(c.path);
      return b;
    });
    // A commit's paths are distinct (the API refuses one twice): recorded once it is read.
    for (const c of m.changes) written.set(c.path, c);
    return before;
  });
  return { earlier, unseenDeletions };
}

/**
 * Writes the commits of a group from the API onto a branch whose row the caller locked, at the
 * sequences allocated for them. Each commit's checks see the branch as the commits before it left
 * it: a deletion must find its path, and a commit must change something (else EMPTY_COMMIT, which
 * rolls back the group). `view` is the branch's view at its head before the group. Several are
 * written in one statement (commit_group_insert) with their events; a commit alone takes the
 * single commit's statements, which cost PostgreSQL about 0.5 ms less than the group
 * statement does for one commit (docs/benchmarks.md, "Group commit"). Moves `branch` to the last
 * commit's head.
 */
export async function writeCommits(
  tx: Tx,
  repo: { id: number; name: string },
  branch: BranchRow,
  view: View,
  members: GroupMember[],
  allocated: Allocated[],
): Promise<void> {
  const [alone, second] = members;
  if (alone && !second) {
    await requireDeletedPathsExist(
      tx,
      view,
      alone.changes.filter((c) => !c.sha256).map((c) => c.path),
    );
    await writeCommitRows(tx, repo, branch, { ...alone, unlessUnchangedIn: view }, allocated[0] as Allocated);
    return;
  }
  const { earlier, unseenDeletions } = earlierInGroup(members, branch.name);
  // First, as a commit alone checks its deletions before anything else.
  await requireDeletedPathsExist(tx, view, unseenDeletions);
  const rows = await groupRows(tx, repo, branch, members, allocated, earlier);
  const createdAt = (allocated[0] as Allocated).created_at;
  const row = await firstRowOf(
    tx,
    commit_group_insert(groupValues(repo, branch, view, members, createdAt, rows)),
  );
  const changed = new Set([...(row?.changed ?? []).map(Number), ...rows.decided]);
  const sequences = rows.commits.sequence;
  const empty = sequences.findIndex((s) => !changed.has(s));
  if (empty >= 0)
    refuseEmpty(branch.name, empty === 0 ? branch.head_sequence : (sequences[empty - 1] as number));
  branch.head_sequence = sequences.at(-1) as number;
  branch.head_hash = rows.headHash;
  tx.afterCommit(wakeDeliverers);
}

/** The rows of a group's commits, each chained to the one before, in the statement's arrays. */
interface GroupRows {
  commits: { sequence: number[]; prev: string[]; hash: string[] };
  files: { sequence: number[]; unseen: boolean[]; changes: WrittenChange[] };
  log: { level: number[]; idx: number[]; hash: Buffer[] };
  events: unknown[][];
  /** Sequences known to change something from a path an earlier commit of the group wrote. */
  decided: Set<number>;
  headHash: string;
}

async function groupRows(
  tx: Tx,
  repo: { id: number; name: string },
  branch: BranchRow,
  members: GroupMember[],
  allocated: Allocated[],
  earlier: (WrittenChange | undefined)[][],
): Promise<GroupRows> {
  const rows: GroupRows = {
    commits: { sequence: [], prev: [], hash: [] },
    files: { sequence: [], unseen: [], changes: [] },
    log: { level: [], idx: [], hash: [] },
    events: [],
    decided: new Set(),
    headHash: branch.head_hash,
  };
  const pending = new Map<string, Buffer>();
  const read = overlayReader(nodeReader(tx, repo.id), pending);
  for (const [k, m] of members.entries()) {
    const at = allocated[k] as Allocated;
    const { sequence } = at;
    refuseUnwritable(m.changes);
    for (const [i, c] of m.changes.entries()) {
      const before = earlier[k]?.[i];
      rows.files.sequence.push(sequence);
      rows.files.unseen.push(before === undefined);
      rows.files.changes.push(c);
      if (before !== undefined && differs(before, c)) rows.decided.add(sequence);
    }
    const hash = chainedHash(repo.name, branch.name, rows.headHash, m, at);
    // Leaf i is commit i + 1; a later commit of the group may complete a block holding this one.
    const leaf = Buffer.from(hash, "hex");
    for (const n of await nodesCompletedBy(sequence - 1, leaf, read)) {
      rows.log.level.push(n.level);
      rows.log.idx.push(n.idx);
      rows.log.hash.push(n.hash);
      pending.set(`${n.level}/${n.idx}`, n.hash);
    }
    pending.set(`0/${sequence - 1}`, leafHash(leaf));
    rows.commits.sequence.push(sequence);
    rows.commits.prev.push(rows.headHash);
    rows.commits.hash.push(hash);
    rows.events.push(eventOf(repo.name, branch.name, sequence, m));
    rows.headHash = hash;
  }
  return rows;
}

/** commit_group_insert's parameters, in its order. */
function groupValues(
  repo: { id: number },
  branch: BranchRow,
  view: View,
  members: GroupMember[],
  createdAt: Date,
  { commits, files, log, events, headHash }: GroupRows,
): unknown[] {
  const [first] = events;
  if (!first) throw new Error("a group of no commits");
  return [
    repo.id,
    branch.id,
    createdAt,
    commits.sequence,
    members.map((m) => m.message),
    members.map((m) => m.author),
    commits.prev,
    commits.hash,
    files.sequence,
    files.changes.map((c) => c.path),
    files.changes.map((c) => c.sha256),
    files.changes.map((c) => c.contentType),
    files.changes.map((c) => c.binary),
    files.unseen,
    commits.sequence.at(-1),
    headHash,
    log.level,
    log.idx,
    log.hash,
    first[1], // the events' type, source and repo, the same for all
    first[2],
    first[3],
    events.map((e) => e[0]), // id
    events.map((e) => e[4]), // time
    events.map((e) => e[5]), // data
    ...headView(view),
  ];
}

/** Refuses deleting a path that does not exist at the branch head (`view`). */
async function requireDeletedPathsExist(tx: Tx, view: View, paths: string[]) {
  if (paths.length === 0) return;
  const present = await filesInView(tx, view, paths);
  const missing = paths.find((p) => !present.has(p));
  if (missing !== undefined) refuseMissingDeletion(missing, view.branch.name);
}

const refuseMissingDeletion = (path: string, branch: string): never =>
  fail("VALIDATION_FAILED", `body.files: cannot delete '${path}': it does not exist on '${branch}'`);
