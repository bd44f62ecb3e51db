import type pg from "pg";
import type { RepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import type { CreateReleaseRequest } from "./api.ts";

/** The wire shape of a release. */
export interface ReleaseRecord {
  name: string;
  sequence: number;
  notes: string;
  created_at: Date;
  created_by: string;
}

const release_columns = "name, sequence, notes, created_at, created_by";
// FOR KEY SHARE: the commit cannot be deleted (purge) while its release is being recorded.
const commit_lock = `SELECT 1 FROM commits WHERE repo_id = $1 AND sequence = $2 FOR KEY SHARE`;
const release_insert = `
  INSERT INTO releases (repo_id, name, sequence, notes, created_by) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (repo_id, name) DO NOTHING
  RETURNING ${release_columns}`;
const release_select_list = `
  SELECT ${release_columns} FROM releases WHERE repo_id = $1
  ORDER BY sequence DESC, created_at DESC, name`;
const release_select_by_name = `SELECT ${release_columns} FROM releases WHERE repo_id = $1 AND name = $2`;
const release_delete = `DELETE FROM releases WHERE repo_id = $1 AND name = $2 RETURNING name`;

/**
 * Names a sequence. The sequence must be a commit of the repo, on any branch (400
 * SEQUENCE_OUT_OF_RANGE otherwise); a name is taken once per repo (409 RELEASE_EXISTS). The spec
 * has no release event type, so none is recorded.
 */
export async function createRelease(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  input: CreateReleaseRequest,
): Promise<ReleaseRecord> {
  return withTx(pool, async (tx) => {
    const commit = await tx.query(commit_lock, [access.repo.id, input.sequence]);
    if (!commit.rows[0])
      fail(
        "SEQUENCE_OUT_OF_RANGE",
        `body.sequence: ${input.sequence} is not a commit of '${access.repo.name}'`,
      );
    const { rows } = await tx.query(release_insert, [
      access.repo.id,
      input.name,
      input.sequence,
      input.notes,
      actor.identity,
    ]);
    if (!rows[0]) fail("RELEASE_EXISTS", `release '${input.name}' already exists in '${access.repo.name}'`);
    return rows[0];
  });
}

/** The repo's releases, newest first: highest sequence first, then latest created. */
export async function listReleases(db: Queryable, access: RepoAccess): Promise<ReleaseRecord[]> {
  return (await db.query(release_select_list, [access.repo.id])).rows;
}

const release_branches_select = `
  SELECT r.name, b.name AS branch FROM releases r
  JOIN commits c ON c.repo_id = r.repo_id AND c.sequence = r.sequence
  JOIN branches b ON b.id = c.branch_id
  WHERE r.repo_id = $1`;

/**
 * The branch of each release's commit, by release name: a release names a sequence of any
 * branch, and its files and archive are read at (that branch, that sequence). A release whose
 * commit was purged has none.
 */
export async function releaseBranches(db: Queryable, access: RepoAccess): Promise<Map<string, string>> {
  const { rows } = await db.query<{ name: string; branch: string }>(release_branches_select, [
    access.repo.id,
  ]);
  return new Map(rows.map((r) => [r.name, r.branch]));
}

export async function getRelease(db: Queryable, access: RepoAccess, name: string): Promise<ReleaseRecord> {
  const { rows } = await db.query(release_select_by_name, [access.repo.id, name]);
  if (!rows[0]) fail("RELEASE_NOT_FOUND", `release '${name}' not found in '${access.repo.name}'`);
  return rows[0];
}

export async function deleteRelease(db: Queryable, access: RepoAccess, name: string): Promise<void> {
  const { rows } = await db.query(release_delete, [access.repo.id, name]);
  if (!rows[0]) fail("RELEASE_NOT_FOUND", `release '${name}' not found in '${access.repo.name}'`);
}
