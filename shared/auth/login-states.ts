import { createHash } from "node:crypto";
import type { Queryable } from "../db/pool.ts";

/**
 * Browser sign-ins in flight (docs/sessions.md, migrations/0010_login_states.sql): the signed
 * login cookie says what a sign-in is, this table says whether it may still finish. The callback
 * spends the row in the transaction that starts the session, so one `/auth/login` starts at most
 * one session, even when a provider honours its code twice and the callback is replayed.
 */

const login_state_purge = `DELETE FROM login_states WHERE expires_at < $1`;
const login_state_insert = `INSERT INTO login_states (state_sha256, expires_at) VALUES ($1, $2)`;
const login_state_select = `SELECT 1 AS pending FROM login_states WHERE state_sha256 = $1 AND expires_at > $2`;
const login_state_delete = `DELETE FROM login_states WHERE state_sha256 = $1 AND expires_at > $2`;

/** Only the hash is kept: the table alone cannot finish anyone's sign-in. */
const hashOf = (state: string) => createHash("sha256").update(state).digest();

/** Records a new sign-in; deletes the expired ones first, so the table holds only the last minutes' sign-ins. */
export async function rememberLoginState(
  db: Queryable,
  state: string,
  expiresAt: Date,
  now: Date,
): Promise<void> {
  await db.query(login_state_purge, [now]);
  await db.query(login_state_insert, [hashOf(state), expiresAt]);
}

/** True while the sign-in of `state` has not finished, failed or expired. */
export async function loginStatePending(db: Queryable, state: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(login_state_select, [hashOf(state), now]);
  return rowCount === 1;
}

/**
 * Spends the sign-in of `state`: true for the one caller that removed it, false when it was spent
 * already or expired. Two callbacks racing both reach the DELETE; the row lock lets one win.
 */
export async function spendLoginState(db: Queryable, state: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(login_state_delete, [hashOf(state), now]);
  return rowCount === 1;
}
