import type pg from "pg";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { type OrgRow, requireOrg } from "./access.ts";

const org_insert = `
  INSERT INTO orgs (name, created_by) VALUES ($1, $2)
  ON CONFLICT DO NOTHING
  RETURNING name, created_at, created_by`;
const org_member_insert_owner = `INSERT INTO org_members (org, identity, role, added_by) VALUES ($1, $2, 'owner', $2)`;
const org_select_visible = `
  SELECT o.name, o.created_at, o.created_by FROM orgs o
  WHERE $2::boolean
     OR EXISTS (SELECT 1 FROM org_members m WHERE m.org = o.name AND m.identity = $1)
     OR EXISTS (SELECT 1 FROM repos r JOIN repo_roles rr ON rr.repo_id = r.id WHERE r.owner = o.name AND rr.identity = $1)
  ORDER BY o.name`;
const repo_count_by_owner = `SELECT count(*)::int AS n FROM repos WHERE owner = $1`;
const org_delete = `DELETE FROM orgs WHERE name = $1`;

/** Creates an org; the creator becomes its first owner. Any signed-in identity may create one. */
export async function createOrg(pool: pg.Pool, actor: Actor, name: string): Promise<OrgRow> {
  return withTx(pool, async (tx) => {
    const { rows } = await tx.query(org_insert, [name, actor.identity]);
    if (!rows[0]) fail("ORG_EXISTS", `org '${name}' already exists`);
    await tx.query(org_member_insert_owner, [name, actor.identity]);
    await recordEvent(tx, "com.svc.org.created", { org: name, created_by: actor.identity }, { org: name });
    return rows[0] as OrgRow;
  });
}

/** The orgs the caller may see. */
export async function listOrgs(db: Queryable, actor: Actor): Promise<OrgRow[]> {
  const { rows } = await db.query(org_select_visible, [actor.identity, actor.globalAdmin]);
  return rows;
}

export async function getOrg(db: Queryable, actor: Actor, name: string): Promise<OrgRow> {
  return (await requireOrg(db, name, actor)).org;
}

/** Deletes an org (owner or global admin). Refused while it owns repos. */
export async function deleteOrg(pool: pg.Pool, actor: Actor, name: string): Promise<void> {
  await withTx(pool, async (tx) => {
    await requireOrg(tx, name, actor, { manage: true, lock: true });
    const { rows } = await tx.query(repo_count_by_owner, [name]);
    if (rows[0].n > 0)
      fail("ORG_NOT_EMPTY", `org '${name}' still has ${rows[0].n} repo(s); delete them first`);
    await tx.query(org_delete, [name]);
    await recordEvent(tx, "com.svc.org.deleted", { org: name, deleted_by: actor.identity }, { org: name });
  });
}
