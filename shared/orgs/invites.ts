import { createHash, randomBytes, randomUUID } from "node:crypto";
import type pg from "pg";
import type { OrgRole } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { requireOrg } from "./access.ts";
import type { MemberRow } from "./members.ts";

/** How long an invitation can be accepted. */
export const INVITE_LIFETIME_DAYS = 7;

export interface InviteRow {
  id: string;
  org: string;
  email: string;
  role: OrgRole;
  created_at: Date;
  created_by: string;
  expires_at: Date;
}

const invite_columns = "id, org, email, role, created_at, created_by, expires_at";
const invite_insert = `
  INSERT INTO org_invites (id, org, email, role, token_sha256, created_by, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(days => $7))
  RETURNING ${invite_columns}`;
const invite_select_pending = `
  SELECT ${invite_columns} FROM org_invites
  WHERE org = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
  ORDER BY created_at`;
const invite_select_by_token = `
  SELECT ${invite_columns}, accepted_at, revoked_at, expires_at <= now() AS expired
  FROM org_invites WHERE token_sha256 = $1 FOR UPDATE`;
const invite_select_by_id = `
  SELECT ${invite_columns}, accepted_at, revoked_at, expires_at <= now() AS expired
  FROM org_invites WHERE id = $1 AND org = $2 FOR UPDATE`;
const invite_mark_accepted = `UPDATE org_invites SET accepted_at = now(), accepted_by = $2 WHERE id = $1`;
const invite_mark_revoked = `UPDATE org_invites SET revoked_at = now(), revoked_by = $2 WHERE id = $1`;
// Accepting never demotes: an owner who accepts a member invitation stays owner.
const member_upsert_from_invite = `
  INSERT INTO org_members (org, identity, role, added_by) VALUES ($1, $2, $3, $4)
  ON CONFLICT (org, identity) DO UPDATE
    SET role = CASE WHEN org_members.role = 'owner' THEN 'owner' ELSE excluded.role END
  RETURNING org, identity, role, added_at, added_by`;

// Enough to keep the org from going while a membership is made from an invitation.
const org_lock_key_share = "SELECT 1 FROM orgs WHERE name = $1 FOR KEY SHARE";
/**
 * A fresh invitation token. The prefix keeps it from ever starting with `-` (a bare base64url
 * value does one time in 64, and a command line then reads it as an option) and lets secret
 * scanners recognise a leaked one.
 */
const newInviteToken = () => `qi_${randomBytes(32).toString("base64url")}`;

const tokenHash = (token: string) => createHash("sha256").update(token).digest();

/** Invites `email` (owner or global admin). The token is returned here once and stored only as a hash. */
export async function createInvite(
  pool: pg.Pool,
  actor: Actor,
  org: string,
  email: string,
  role: OrgRole,
): Promise<InviteRow & { token: string }> {
  return withTx(pool, async (tx) => {
    // Locked, as every org write does first: a delete of the org waits, or has happened (404).
    await requireOrg(tx, org, actor, { manage: true, lock: true });
    const token = newInviteToken();
    const { rows } = await tx.query(invite_insert, [
      randomUUID(),
      org,
      email.toLowerCase(),
      role,
      tokenHash(token),
      actor.identity,
      INVITE_LIFETIME_DAYS,
    ]);
    return { ...rows[0], token };
  });
}

/** Pending invitations: not accepted, revoked or expired (owner or global admin). */
export async function listInvites(db: Queryable, actor: Actor, org: string): Promise<InviteRow[]> {
  await requireOrg(db, org, actor, { manage: true });
  return (await db.query(invite_select_pending, [org])).rows;
}

function refuseSpent(row: { accepted_at: Date | null; revoked_at: Date | null; expired: boolean }): void {
  if (row.revoked_at) fail("INVITE_REVOKED", "this invitation was revoked");
  if (row.accepted_at) fail("INVITE_USED", "this invitation was already accepted");
  if (row.expired) fail("INVITE_EXPIRED", "this invitation has expired");
}

/** Spends a locked, pending invitation for the caller: the membership it grants. */
async function spendInvite(tx: Tx, actor: Actor, org: string, row: InviteRow): Promise<MemberRow> {
  await tx.query(invite_mark_accepted, [row.id, actor.identity]);
  return (await tx.query(member_upsert_from_invite, [org, actor.identity, row.role, row.created_by])).rows[0];
}

/**
 * Accepts an invitation: the caller's identity must be the invited email. The invitation is
 * locked while it is checked and spent, so one token makes one membership.
 */
export async function acceptInvite(
  pool: pg.Pool,
  actor: Actor,
  org: string,
  token: string,
): Promise<MemberRow> {
  return withTx(pool, async (tx) => {
    // The org row before the invitation's, in the order an org delete takes them (its cascade
    // reaches the invitation): an accept holding the invitation while it waited for the org deadlocked.
    const { rowCount } = await tx.query(org_lock_key_share, [org]);
    if (!rowCount) fail("INVITE_NOT_FOUND", "no such invitation");
    const { rows } = await tx.query(invite_select_by_token, [tokenHash(token)]);
    const row = rows[0];
    if (!row || row.org !== org) fail("INVITE_NOT_FOUND", "no such invitation");
    refuseSpent(row);
    if (row.email !== actor.identity.toLowerCase())
      fail("INVITE_EMAIL_MISMATCH", "this invitation was sent to another email address");
    return spendInvite(tx, actor, org, row);
  });
}

const invite_select_pending_for_email = `
  SELECT ${invite_columns} FROM org_invites
  WHERE email = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
  ORDER BY created_at`;
const invite_select_org = "SELECT org FROM org_invites WHERE id = $1";

/**
 * The pending invitations sent to the caller's own identity (an email), for the web start page.
 * No index serves `email`: org_invites holds only unspent and recent invitations, a small table.
 */
export async function listInvitesFor(db: Queryable, actor: Actor): Promise<InviteRow[]> {
  return (await db.query(invite_select_pending_for_email, [actor.identity.toLowerCase()])).rows;
}

/**
 * Accepts an invitation by its id, for the signed-in invitee (the web start page's button): the
 * same rule as `acceptInvite`, the caller's identity must be the invited email, with the identity
 * standing in for the token, which only its recipient could have shown. An invitation sent to
 * someone else answers INVITE_NOT_FOUND, so an id tells a stranger nothing.
 */
export async function acceptInviteById(pool: pg.Pool, actor: Actor, id: string): Promise<MemberRow> {
  return withTx(pool, async (tx) => {
    const org: string | undefined = (await tx.query(invite_select_org, [id])).rows[0]?.org;
    // Org first, then the invitation, as acceptInvite takes them.
    const { rowCount } = org ? await tx.query(org_lock_key_share, [org]) : { rowCount: 0 };
    const row = org && rowCount ? (await tx.query(invite_select_by_id, [id, org])).rows[0] : undefined;
    if (!org || !row || row.email !== actor.identity.toLowerCase())
      fail("INVITE_NOT_FOUND", "no such invitation");
    refuseSpent(row);
    return spendInvite(tx, actor, org, row);
  });
}

/** Revokes a pending invitation (owner or global admin). */
export async function revokeInvite(pool: pg.Pool, actor: Actor, org: string, id: string): Promise<void> {
  await withTx(pool, async (tx) => {
    await requireOrg(tx, org, actor, { manage: true, lock: true });
    const { rows } = await tx.query(invite_select_by_id, [id, org]);
    if (!rows[0]) fail("INVITE_NOT_FOUND", "no such invitation");
    refuseSpent(rows[0]);
    await tx.query(invite_mark_revoked, [id, actor.identity]);
  });
}
