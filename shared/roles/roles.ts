import type pg from "pg";
import type { RepoAccess, Role } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";

export interface RoleAssignment {
  identity: string;
  role: Role;
  granted_at: Date;
  granted_by: string;
}

const role_select_by_repo = `SELECT identity, role, granted_at, granted_by FROM repo_roles WHERE repo_id = $1 ORDER BY identity`;
const role_upsert = `
  INSERT INTO repo_roles (repo_id, identity, role, granted_by) VALUES ($1, $2, $3, $4)
  ON CONFLICT (repo_id, identity) DO UPDATE SET role = excluded.role, granted_at = now(), granted_by = excluded.granted_by
  RETURNING identity, role, granted_at, granted_by`;
const role_delete = `DELETE FROM repo_roles WHERE repo_id = $1 AND identity = $2 RETURNING identity`;

/** The explicit role assignments of a repo (org-derived access is not listed here). */
export async function listRoles(db: Queryable, access: RepoAccess): Promise<RoleAssignment[]> {
  return (await db.query(role_select_by_repo, [access.repo.id])).rows;
}

/** Grants or changes a role; records `role.changed`. */
export async function setRole(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  identity: string,
  role: Role,
): Promise<RoleAssignment> {
  return withTx(pool, async (tx) => {
    const { rows } = await tx.query(role_upsert, [access.repo.id, identity, role, actor.identity]);
    await recordEvent(
      tx,
      "com.svc.role.changed",
      { repo: access.repo.name, identity, role, changed_by: actor.identity },
      { repo: access.repo.name },
    );
    return rows[0];
  });
}

/** Revokes a role; records `role.changed` with an empty role. */
export async function removeRole(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  identity: string,
): Promise<void> {
  await withTx(pool, async (tx) => {
    const { rows } = await tx.query(role_delete, [access.repo.id, identity]);
    if (!rows[0]) fail("ROLE_NOT_FOUND", `'${identity}' has no role on '${access.repo.name}'`);
    await recordEvent(
      tx,
      "com.svc.role.changed",
      { repo: access.repo.name, identity, role: "", changed_by: actor.identity },
      { repo: access.repo.name },
    );
  });
}
