import type pg from "pg";
import type { RepoAccess, RepoRow } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { requireOrg } from "../orgs/access.ts";
import { exclusivelyInRepo } from "./guard.ts";

/** The wire shape of a repo: the row without its internal id. */
export type RepoRecord = Omit<RepoRow, "id">;

export const toRepoRecord = ({ id: _id, ...record }: RepoRow): RepoRecord => record;

const repo_insert = `
  INSERT INTO repos (name, owner, created_by) VALUES ($1, $2, $3)
  ON CONFLICT DO NOTHING
  RETURNING id, name, owner, created_at, created_by`;
const branch_insert_main = `INSERT INTO branches (repo_id, name, base_sequence, head_sequence, created_by) VALUES ($1, 'main', 0, 0, $2)`;
const role_insert_admin = `INSERT INTO repo_roles (repo_id, identity, role, granted_by) VALUES ($1, $2, 'admin', $2)`;
// A repo is readable through a repo role, through membership of its org, or by a global admin.
const repo_select_readable = `
  SELECT r.name, r.owner, r.created_at, r.created_by FROM repos r
  WHERE ($2::text IS NULL OR r.owner = $2)
    AND ($3::boolean
      OR EXISTS (SELECT 1 FROM repo_roles rr WHERE rr.repo_id = r.id AND rr.identity = $1)
      OR EXISTS (SELECT 1 FROM org_members m WHERE m.org = r.owner AND m.identity = $1))
  ORDER BY r.name`;
const repo_select_by_name = `SELECT id, name, owner, created_at, created_by FROM repos WHERE name = $1`;
const repo_delete = `DELETE FROM repos WHERE id = $1`;
const repo_lock = `SELECT id FROM repos WHERE id = $1 FOR UPDATE`;

/**
 * A repo by name whoever asks, or null: for callers with no person behind them (a presigned URL,
 * an event delivery), which check their right to it some other way.
 */
export async function findRepoByName(db: Queryable, name: string): Promise<RepoRow | null> {
  const { rows } = await db.query(repo_select_by_name, [name]);
  return (rows[0] as RepoRow | undefined) ?? null;
}

/**
 * Creates a repo in an org (org owner or global admin), with its `main` branch, and makes the
 * creator its admin. `name` is the full name, whose first segment is `owner` (shared/repos/api.ts).
 */
export async function createRepo(
  pool: pg.Pool,
  actor: Actor,
  input: { owner: string; name: string },
): Promise<RepoRecord> {
  return withTx(pool, async (tx) => {
    // FOR UPDATE on the org row orders this against a concurrent org delete.
    await requireOrg(tx, input.owner, actor, { manage: true, lock: true });
    const { rows } = await tx.query(repo_insert, [input.name, input.owner, actor.identity]);
    const repo = rows[0] as RepoRow | undefined;
    if (!repo) fail("REPO_EXISTS", `repo '${input.name}' already exists`);
    await tx.query(branch_insert_main, [repo.id, actor.identity]);
    await tx.query(role_insert_admin, [repo.id, actor.identity]);
    await recordEvent(
      tx,
      "com.svc.repo.created",
      { repo: repo.name, owner: repo.owner, created_by: actor.identity },
      { repo: repo.name },
    );
    return toRepoRecord(repo);
  });
}

/** Every repo the caller may read, optionally within one org. */
export async function listRepos(db: Queryable, actor: Actor, org?: string): Promise<RepoRecord[]> {
  if (org !== undefined) await requireOrg(db, org, actor);
  return (await db.query(repo_select_readable, [actor.identity, org ?? null, actor.globalAdmin])).rows;
}

/** Deletes a repo with all its branches, commits and roles (org owner or global admin). */
export async function deleteRepo(pool: pg.Pool, actor: Actor, access: RepoAccess): Promise<void> {
  if (access.orgRole !== "owner" && !actor.globalAdmin) {
    fail("FORBIDDEN", `deleting '${access.repo.name}' needs the owner role on org '${access.repo.owner}'`);
  }
  // The repo's lock exclusively before any row (./guard.ts): writers in the repo finish first, and
  // those that come later wait, then find it gone.
  await exclusivelyInRepo(access.repo, () =>
    withTx(pool, async (tx) => {
      await tx.query(repo_lock, [access.repo.id]);
      await tx.query(repo_delete, [access.repo.id]);
      await recordEvent(
        tx,
        "com.svc.repo.deleted",
        { repo: access.repo.name, deleted_by: actor.identity },
        { repo: access.repo.name },
      );
    }),
  );
}
