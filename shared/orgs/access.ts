import type { OrgRole } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/tx.ts";
import { fail } from "../errors.ts";

export interface OrgRow {
  name: string;
  created_at: Date;
  created_by: string;
}

export interface OrgAccess {
  org: OrgRow;
  role: OrgRole | null;
  /** Owners and global admins manage the org. */
  manage: boolean;
}

const org_select_with_access = `
  SELECT o.name, o.created_at, o.created_by, m.role,
         EXISTS (SELECT 1 FROM repos r JOIN repo_roles rr ON rr.repo_id = r.id
                 WHERE r.owner = o.name AND rr.identity = $2) AS has_repo_role
  FROM orgs o LEFT JOIN org_members m ON m.org = o.name AND m.identity = $2
  WHERE o.name = $1`;

/**
 * Resolves an org for a caller. It is visible to its members, to global admins and to anyone with
 * a role on one of its repos; to anyone else it answers 404, as if it did not exist. `lock` takes
 * the org row FOR UPDATE so that, for example, a delete cannot race a repo being created in it.
 */
export function requireOrg(
  db: Queryable,
  name: string,
  actor: Actor,
  opts?: { manage?: boolean; lock?: false },
): Promise<OrgAccess>;
/** Locking the org row holds it until the transaction ends, so it needs one. */
export function requireOrg(
  tx: Tx,
  name: string,
  actor: Actor,
  opts: { manage?: boolean; lock: true },
): Promise<OrgAccess>;
export async function requireOrg(
  db: Queryable,
  name: string,
  actor: Actor,
  opts: { manage?: boolean; lock?: boolean } = {},
): Promise<OrgAccess> {
  const { rows } = await db.query(org_select_with_access + (opts.lock ? " FOR UPDATE OF o" : ""), [
    name,
    actor.identity,
  ]);
  const row = rows[0];
  if (!row || !(row.role || row.has_repo_role || actor.globalAdmin))
    fail("ORG_NOT_FOUND", `org '${name}' not found`);
  const access: OrgAccess = {
    org: { name: row.name, created_at: row.created_at, created_by: row.created_by },
    role: row.role,
    manage: row.role === "owner" || actor.globalAdmin,
  };
  if (opts.manage && !access.manage) fail("FORBIDDEN", `this needs the owner role on org '${name}'`);
  return access;
}
