/**
 * A position in the event log: the writing transaction's id (`events.txid`, xid8) and the row's
 * `position`. Readers follow cursors in (txid, position) order and read only events whose
 * transaction has ended (migrations/0003_event_delivery.sql), so nothing can later appear behind
 * a cursor. The SSE `id:` of an event is its cursor, written `<txid>.<position>`.
 */
export interface Cursor {
  txid: bigint;
  position: bigint;
}

const CURSOR = /^(\d{1,20})\.(\d{1,19})$/;
const U64 = (1n << 64n) - 1n;
const I63 = (1n << 63n) - 1n;

export function formatCursor(c: Cursor): string {
  return `${c.txid}.${c.position}`;
}

/** Parses `<txid>.<position>`; undefined when the text is not a cursor Quire could have written. */
export function parseCursor(text: string): Cursor | undefined {
  const [, txidText, positionText] = CURSOR.exec(text.trim()) ?? [];
  if (txidText === undefined || positionText === undefined) return undefined;
  const txid = BigInt(txidText);
  const position = BigInt(positionText);
  if (txid > U64 || position > I63) return undefined;
  return { txid, position };
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function compareCursors(a: Cursor, b: Cursor): number {
  if (a.txid !== b.txid) return a.txid < b.txid ? -1 : 1;
  if (a.position !== b.position) return a.position < b.position ? -1 : 1;
  return 0;
}

export const after = (a: Cursor, b: Cursor) => compareCursors(a, b) > 0;

export function maxCursor(a: Cursor, b: Cursor): Cursor {
  return after(a, b) ? a : b;
}

/** SQL parameters for a cursor: xid8 and bigint, both sent as text. */
export const cursorParams = (c: Cursor): [string, string] => [c.txid.toString(), c.position.toString()];
