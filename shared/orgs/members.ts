import type pg from "pg";
import type { OrgRole } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { type Tx, withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { requireOrg } from "./access.ts";

export interface MemberRow {
  org: string;
  identity: string;
  role: OrgRole;
  added_at: Date;
  added_by: string;
}

const member_columns = "org, identity, role, added_at, added_by";
const member_select_by_org = `SELECT ${member_columns} FROM org_members WHERE org = $1 ORDER BY identity`;
const member_select_one = `SELECT ${member_columns} FROM org_members WHERE org = $1 AND identity = $2 FOR UPDATE`;
const member_upsert = `
  INSERT INTO org_members (org, identity, role, added_by) VALUES ($1, $2, $3, $4)
  ON CONFLICT (org, identity) DO UPDATE SET role = excluded.role
  RETURNING ${member_columns}, (xmax = 0) AS inserted`;
const member_delete = `DELETE FROM org_members WHERE org = $1 AND identity = $2`;
const owner_count_locked = `SELECT identity FROM org_members WHERE org = $1 AND role = 'owner' FOR UPDATE`;

export async function listMembers(db: Queryable, actor: Actor, org: string): Promise<MemberRow[]> {
  await requireOrg(db, org, actor);
  return (await db.query(member_select_by_org, [org])).rows;
}

/** Refuses a change that would leave the org with no owner. Locks the owner rows first. */
async function keepAnOwner(tx: Tx, org: string, leaving: string): Promise<void> {
  const { rows } = await tx.query(owner_count_locked, [org]);
  const owners = rows.map((r) => r.identity as string);
  if (owners.length === 1 && owners[0] === leaving)
    fail("LAST_OWNER", `'${leaving}' is the last owner of '${org}'`);
}

/** Adds a member or changes a member's role (owner or global admin). */
export async function putMember(
  pool: pg.Pool,
  actor: Actor,
  org: string,
  identity: string,
  role: OrgRole,
): Promise<{ member: MemberRow; created: boolean }> {
  return withTx(pool, async (tx) => {
    await requireOrg(tx, org, actor, { manage: true, lock: true });
    if (role !== "owner") await keepAnOwner(tx, org, identity);
    const { rows } = await tx.query(member_upsert, [org, identity, role, actor.identity]);
    const { inserted, ...member } = rows[0];
    return { member, created: inserted };
  });
}

/** Removes a member: an owner or global admin may remove anyone, a member may leave. */
export async function removeMember(
  pool: pg.Pool,
  actor: Actor,
  org: string,
  identity: string,
): Promise<void> {
  await withTx(pool, async (tx) => {
    const access = await requireOrg(tx, org, actor, { lock: true });
    if (!access.manage && identity !== actor.identity)
      fail("FORBIDDEN", `this needs the owner role on org '${org}'`);
    const { rows } = await tx.query(member_select_one, [org, identity]);
    if (!rows[0]) fail("MEMBER_NOT_FOUND", `'${identity}' is not a member of '${org}'`);
    await keepAnOwner(tx, org, identity);
    await tx.query(member_delete, [org, identity]);
  });
}
