import { MAIN } from "../branches/branches.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import type { DatabaseTarget } from "../db/target.ts";
import { type Cursor, formatCursor, parseCursor } from "../events/cursor.ts";
import { READ_BATCH } from "../events/feed.ts";
import { defaultHubOptions } from "../events/hub.ts";
import { type LoggedEvent, logHead, readAfter } from "../events/log.ts";
import type { EventType } from "../events/record.ts";
import { WakeLoop } from "../events/wake.ts";
import { attemptAutoMerge } from "./auto-merge.ts";

/**
 * The events that can turn a verdict to "passes": a review, a check run, a commit (on the branch:
 * its head moved; on main: the policies or the base moved), another merge or a rebase, a role
 * change, a proposal, and enabling itself. Never the events an attempt records (merge.blocked,
 * auto_merge.disabled), so an attempt cannot wake itself.
 */
export const AUTO_MERGE_TRIGGERS: readonly EventType[] = [
  "com.svc.branch.auto_merge.enabled",
  "com.svc.review.submitted",
  "com.svc.check.reported",
  "com.svc.commit.created",
  "com.svc.branch.merged",
  "com.svc.branch.rebased",
  "com.svc.role.changed",
  "com.svc.proposal.opened",
];
const TRIGGERS: ReadonlySet<string> = new Set(AUTO_MERGE_TRIGGERS);

const RELAY = "auto-merge";
/** The least time between two of the relay's reads of the log (WakeLoop `minStepIntervalMs`). */
const STEP_INTERVAL_MS = 50;
const cursor_select = `SELECT cursor FROM event_relay_cursors WHERE relay = $1`;
// Only forward: two instances saving out of order never move the cursor back.
const cursor_upsert = `
  INSERT INTO event_relay_cursors (relay, cursor) VALUES ($1, $2)
  ON CONFLICT (relay) DO UPDATE SET cursor = excluded.cursor, updated_at = now()
  WHERE (split_part(event_relay_cursors.cursor, '.', 1)::numeric, split_part(event_relay_cursors.cursor, '.', 2)::numeric)
      < (split_part(excluded.cursor, '.', 1)::numeric, split_part(excluded.cursor, '.', 2)::numeric)`;
const enabled_in_repo = `
  SELECT b.name FROM branches b JOIN repos r ON r.id = b.repo_id
  WHERE r.name = $1 AND b.status = 'active' AND b.auto_merge_by IS NOT NULL ORDER BY b.name`;

async function loadCursor(db: Queryable): Promise<Cursor | undefined> {
  const { rows } = await db.query<{ cursor: string }>(cursor_select, [RELAY]);
  return rows[0] ? parseCursor(rows[0].cursor) : undefined;
}

const saveCursor = (db: Queryable, cursor: Cursor) => db.query(cursor_upsert, [RELAY, formatCursor(cursor)]);

/**
 * The branches of `repo` one event may have made mergeable (none for an event that is not a
 * trigger). An event on another branch changes only that branch; anything that moves main, changes
 * roles or merges a branch can change every enabled branch of the repo.
 */
export async function branchesToAttempt(
  db: Queryable,
  event: { repo: string | null; type: string; data: Record<string, unknown> },
  enabledIn: (db: Queryable, repo: string) => Promise<string[]> = enabledBranches,
): Promise<string[]> {
  if (event.repo === null || !TRIGGERS.has(event.type)) return [];
  const branch = event.data["branch"];
  if (typeof branch === "string" && branch !== MAIN && event.type !== "com.svc.branch.merged")
    return [branch];
  return enabledIn(db, event.repo);
}

async function enabledBranches(db: Queryable, repo: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(enabled_in_repo, [repo]);
  return rows.map((r) => r.name);
}

/**
 * The branches a batch may have made mergeable, as [repo, branch], each once, in first-seen order.
 * A repo's enabled branches are read once per batch, however many of its events the batch holds.
 */
async function candidates(db: Queryable, events: LoggedEvent[]): Promise<[string, string][]> {
  const found = new Map<string, [string, string]>();
  const enabled = new Map<string, Promise<string[]>>();
  const enabledOnce = (db: Queryable, repo: string) => {
    const known = enabled.get(repo) ?? enabledBranches(db, repo);
    enabled.set(repo, known);
    return known;
  };
  for (const { repo, type, envelope } of events) {
    if (repo === null) continue;
    for (const branch of await branchesToAttempt(db, { repo, type, data: envelope.data }, enabledOnce))
      found.set(`${repo}\0${branch}`, [repo, branch]);
  }
  return [...found.values()];
}

export interface AutoMergeRelay {
  start(): Promise<void>;
  wake(): void;
  close(): Promise<void>;
}

/**
 * Follows the event log with its own cursor in `event_relay_cursors` and attempts the auto-merge
 * of every branch an event may have made mergeable (docs/auto-merge.md). The cursor moves only
 * after a batch's attempts, so a relay stopped mid-batch attempts them again on restart: an
 * attempt is idempotent (the merge's branch lock and its active check), so several instances may
 * run it at once and a branch still merges once.
 */
export function createAutoMergeRelay(
  ctx: AppContext,
  databaseUrl: DatabaseTarget,
  opts: { sweepMs?: number } = {},
): AutoMergeRelay {
  // One branch's failure (a store or opa error) must not hold every other branch's auto-merge
  // behind it forever: it is logged, and that branch is attempted again at its next event.
  const attempt = async (repo: string, branch: string) => {
    try {
      const outcome = await attemptAutoMerge(ctx, repo, branch);
      if (outcome === "merged" || outcome === "disabled")
        ctx.log.info({ repo, branch, outcome }, "auto-merge attempted");
    } catch (err) {
      ctx.log.warn({ repo, branch, err }, "auto-merge attempt failed; it is tried again at the next event");
    }
  };
  const loop = new WakeLoop({
    databaseUrl,
    name: "quire-auto-merge",
    log: ctx.log,
    sweepMs: opts.sweepMs ?? defaultHubOptions.sweepMs,
    // Auto-merge is not waited for: a burst of commits is read in batches of 50 ms, not one
    // batch (four queries) per commit, which cost 16 clients committing to one repo 12 to 27% of their
    // rate (docs/auto-merge.md).
    minStepIntervalMs: STEP_INTERVAL_MS,
    async step(client) {
      let cursor = await loadCursor(client);
      if (cursor === undefined) {
        cursor = await logHead(client);
        await saveCursor(client, cursor);
      }
      const batch = await readAfter(client, cursor, READ_BATCH);
      const last = batch.events.at(-1);
      if (last !== undefined) {
        for (const [repo, branch] of await candidates(client, batch.events)) await attempt(repo, branch);
        await saveCursor(client, last.cursor);
      }
      return batch.more ? "more" : batch.held ? "held" : "idle";
    },
  });
  return { start: () => loop.start(), wake: () => loop.wake(), close: () => loop.close() };
}
