import type { Queryable } from "../db/pool.ts";
import { type Cursor, cursorParams } from "./cursor.ts";
import type { CloudEvent } from "./record.ts";

/** An event as read from the log: its cursor, the repo it belongs to (null for org events), its envelope. */
export interface LoggedEvent {
  cursor: Cursor;
  repo: string | null;
  type: string;
  envelope: CloudEvent;
}

interface EventRow {
  txid: string;
  position: string;
  id: string;
  type: string;
  source: string;
  repo: string | null;
  time: Date;
  data: Record<string, unknown>;
}

const columns = `e.txid::text AS txid, e.position::text AS position, e.id, e.type, e.source, e.repo, e.time, e.data`;

function toLogged(row: EventRow): LoggedEvent {
  return {
    cursor: { txid: BigInt(row.txid), position: BigInt(row.position) },
    repo: row.repo,
    type: row.type,
    envelope: {
      specversion: "1.0",
      type: row.type,
      source: row.source,
      id: row.id,
      time: row.time.toISOString(),
      datacontenttype: "application/json",
      data: row.data,
    },
  };
}

// The next events after a cursor, with the reader's horizon: the oldest transaction still running
// (pg_snapshot_xmin). Only events of older transactions may be handed out; the rest are read only
// to learn that some are waiting behind a running transaction.
const events_after = `
  SELECT ${columns}, pg_snapshot_xmin(pg_current_snapshot())::text AS horizon
  FROM events e
  WHERE (e.txid, e.position) > ($1::xid8, $2::bigint)
  ORDER BY e.txid, e.position
  LIMIT $3`;

export interface Batch {
  events: LoggedEvent[];
  /** Committed events exist after the batch but wait behind a transaction that is still running. */
  held: boolean;
  /** The batch was cut at the limit: read again. */
  more: boolean;
}

/**
 * The events after `cursor` whose transactions have all ended, in (txid, position) order. An event
 * of a transaction that is still running is never returned, and neither is anything after it, so
 * a reader that advances its cursor to the last event returned never skips one.
 */
export async function readAfter(db: Queryable, cursor: Cursor, limit: number): Promise<Batch> {
  const { rows } = await db.query<EventRow & { horizon: string }>(events_after, [
    ...cursorParams(cursor),
    limit,
  ]);
  const events: LoggedEvent[] = [];
  for (const row of rows) {
    if (BigInt(row.txid) >= BigInt(row.horizon)) return { events, held: true, more: false };
    events.push(toLogged(row));
  }
  return { events, held: false, more: rows.length === limit };
}

/** Where a reader that starts now begins: every transaction older than the horizon has ended. */
export async function logHead(db: Queryable): Promise<Cursor> {
  const { rows } = await db.query<{ horizon: string }>(
    "SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon",
  );
  const [row] = rows;
  if (row === undefined) throw new Error("the snapshot query returned no row");
  return { txid: BigInt(row.horizon), position: 0n };
}

/**
 * The log as a client connecting now sees it: the horizon (logHead), and which transactions at or
 * after it had already ended. The horizon alone is the oldest transaction still running anywhere
 * on the cluster, so it can lie far behind "now" while one long transaction runs (in any database
 * of the server): an event of a transaction that ended before the client connected is after it,
 * yet not new to that client. The snapshot's list of running transactions tells them apart.
 */
export interface LogNow {
  horizon: Cursor;
  /** Whether a transaction at or after the horizon had ended when the snapshot was taken. */
  endedBefore(txid: bigint): boolean;
}

export async function logNow(db: Queryable): Promise<LogNow> {
  const { rows } = await db.query<{ xmin: string; xmax: string; running: string[] }>(
    `SELECT pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax,
            ARRAY(SELECT pg_snapshot_xip(s)::text) AS running
     FROM pg_current_snapshot() AS s`,
  );
  const [row] = rows;
  if (row === undefined) throw new Error("the snapshot query returned no row");
  const xmax = BigInt(row.xmax);
  const running = new Set(row.running.map(BigInt));
  return {
    horizon: { txid: BigInt(row.xmin), position: 0n },
    endedBefore: (txid) => txid < xmax && !running.has(txid),
  };
}

export interface Filter {
  /** Exact repo name; null: every event (org events included). */
  repo: string | null;
  /** Event types; null: every type. */
  types: readonly string[] | null;
}

const range_all = `
  SELECT ${columns} FROM events e
  WHERE (e.txid, e.position) > ($1::xid8, $2::bigint) AND (e.txid, e.position) <= ($3::xid8, $4::bigint)
    AND ($5::text[] IS NULL OR e.type = ANY ($5::text[]))
  ORDER BY e.txid, e.position
  LIMIT $6`;
const range_repo = `
  SELECT ${columns} FROM events e
  WHERE e.repo = $7
    AND (e.repo, e.txid, e.position) > ($7, $1::xid8, $2::bigint)
    AND (e.repo, e.txid, e.position) <= ($7, $3::xid8, $4::bigint)
    AND ($5::text[] IS NULL OR e.type = ANY ($5::text[]))
  ORDER BY e.txid, e.position
  LIMIT $6`;

/**
 * The events in (from, to] that match `filter`, in order, at most `limit`. Replays read only up
 * to a cursor the live reader has passed, so every event in the range has long committed.
 */
export async function readRange(
  db: Queryable,
  from: Cursor,
  to: Cursor,
  filter: Filter,
  limit: number,
): Promise<LoggedEvent[]> {
  const params: unknown[] = [...cursorParams(from), ...cursorParams(to), filter.types, limit];
  const { rows } =
    filter.repo === null
      ? await db.query<EventRow>(range_all, params)
      : await db.query<EventRow>(range_repo, [...params, filter.repo]);
  return rows.map(toLogged);
}

const event_age_at = `
  SELECT time < now() - make_interval(days => $3) AS expired
  FROM events WHERE txid = $1::xid8 AND position = $2::bigint`;

/**
 * Whether a client resuming after `cursor` can be given everything it missed: `kept` when its last
 * event is still in the log and younger than the retention period (so nothing after it has been
 * deleted), `expired` when it is older (events after it may have been deleted), `missing` when the
 * log no longer has it (or never had it).
 */
export async function resumeState(
  db: Queryable,
  cursor: Cursor,
  retentionDays: number,
): Promise<"kept" | "expired" | "missing"> {
  const { rows } = await db.query<{ expired: boolean }>(event_age_at, [
    ...cursorParams(cursor),
    retentionDays,
  ]);
  const row = rows[0];
  if (!row) return "missing";
  return row.expired ? "expired" : "kept";
}

// Events past retention that no webhook delivery still needs: an event with an undelivered outbox
// row is kept (deleting it would cascade to the row and lose the delivery). In batches, so one
// run never holds many locks for long.
const expired_delete = `
  DELETE FROM events WHERE position IN (
    SELECT e.position FROM events e
    WHERE e.time < now() - make_interval(days => $1)
      AND NOT EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.event_id = e.id AND o.delivered_at IS NULL)
    ORDER BY e.position
    LIMIT $2)`;

/** Deletes events older than `days` that no pending webhook delivery needs; returns how many. */
export async function deleteExpiredEvents(db: Queryable, days: number, batch = 1000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await db.query(expired_delete, [days, batch]);
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return total;
  }
}
