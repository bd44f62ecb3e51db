import type { Actor } from "../auth/actor.ts";
import type { BranchRow } from "../branches/branches.ts";
import { firstRowOf, prepared, type Queryable } from "../db/pool.ts";
import { fail } from "../errors.ts";

export const roles = ["reader", "writer", "maintainer", "admin"] as const;
export type Role = (typeof roles)[number];
export const orgRoles = ["owner", "member"] as const;
export type OrgRole = (typeof orgRoles)[number];

const rank: Record<Role, number> = { reader: 1, writer: 2, maintainer: 3, admin: 4 };

/** True when `have` is `need` or higher. */
export function atLeast(have: Role | null, need: Role): boolean {
  return have !== null && rank[have] >= rank[need];
}

function higher(a: Role | null, b: Role | null): Role | null {
  if (a === null) return b;
  if (b === null) return a;
  return rank[a] >= rank[b] ? a : b;
}

/** Org roles give repo access on the org's repos: an owner acts as admin, a member as reader. */
export function roleFromOrg(orgRole: OrgRole | null): Role | null {
  if (orgRole === "owner") return "admin";
  if (orgRole === "member") return "reader";
  return null;
}

export interface RepoRow {
  id: number;
  name: string;
  owner: string;
  created_at: Date;
  created_by: string;
}

/** A repo together with what the caller may do on it. */
export interface RepoAccess {
  repo: RepoRow;
  /** Effective role: the highest of the repo role, the org-derived role and global admin. */
  role: Role | null;
  orgRole: OrgRole | null;
  /**
   * The branch a read names, read in the same statement as the role (`requireRepoRole`'s
   * `branch`), so that a read resolves its view without another round trip (shared/commits/view.ts).
   */
  branch?: PrefetchedBranch;
}

/** A branch as the access statement read it, with what a view of its head needs. */
export interface PrefetchedBranch {
  name: string;
  /** Null: the repo has no branch of that name. */
  row: BranchRow | null;
  /** For a branch other than main: main's id and the branch's epoch at its head. */
  mainId: number | null;
  epoch: { from_at: number; base_sequence: number; own_from: number } | null;
  /** The file a file read names, when the route prefetches it (`prefetch: "file"`). */
  file?: PrefetchedFile | undefined;
}

const repo_select_with_access = prepared<RepoRow & { repo_role: Role | null; org_role: OrgRole | null }>(
  "repo_select_with_access",
  `
  SELECT r.id, r.name, r.owner, r.created_at, r.created_by, rr.role AS repo_role, om.role AS org_role
  FROM repos r
  LEFT JOIN repo_roles rr ON rr.repo_id = r.id AND rr.identity = $2
  LEFT JOIN org_members om ON om.org = r.owner AND om.identity = $2
  WHERE r.name = $1`,
);

const access_and_branch_columns = `
  r.id, r.name, r.owner, r.created_at, r.created_by, rr.role AS repo_role, om.role AS org_role,
  b.id AS b_id, b.head_sequence AS b_head_sequence, b.base_sequence AS b_base_sequence,
  b.status AS b_status, b.draft AS b_draft, b.head_hash AS b_head_hash,
  b.created_by AS b_created_by, b.created_at AS b_created_at,
  b.auto_merge_by AS b_auto_merge_by, b.auto_merge_at AS b_auto_merge_at,
  m.id AS main_id, e.from_at AS e_from_at, e.base_sequence AS e_base_sequence, e.own_from AS e_own_from`;
const access_and_branch_from = `
  repos r
  LEFT JOIN repo_roles rr ON rr.repo_id = r.id AND rr.identity = $2
  LEFT JOIN org_members om ON om.org = r.owner AND om.identity = $2
  LEFT JOIN branches b ON b.repo_id = r.id AND b.name = $3
  LEFT JOIN branches m ON m.repo_id = r.id AND m.name = 'main' AND $3 <> 'main'
  LEFT JOIN LATERAL (
    SELECT from_at, base_sequence, own_from FROM branch_epochs
    WHERE branch_id = b.id AND from_at <= b.head_sequence AND $3 <> 'main'
    ORDER BY from_at DESC LIMIT 1) e ON true`;
type AccessRow = RepoRow & { repo_role: Role | null; org_role: OrgRole | null } & PrefixedBranch;

// The same, with the branch named $3 (and, for a branch other than main, main's id and the
// branch's epoch at its head): one round trip gives a read its access and its view.
const repo_select_with_access_and_branch = prepared<AccessRow>(
  "repo_select_with_access_and_branch",
  `SELECT ${access_and_branch_columns} FROM ${access_and_branch_from} WHERE r.name = $1`,
);

// And the file $4 at $5 (default: the head) in the view those give, with its stored body: a file
// read in one round trip. The view is the one viewOf builds when the epoch at the head applies;
// the reader checks that (fileOfView in shared/commits/file-read.ts).
const repo_select_with_access_and_file = prepared<AccessRow & PrefetchedFileRow>(
  "repo_select_with_access_and_file",
  `
  SELECT ${access_and_branch_columns}, fv.at AS f_at, fv.content_sha256 AS f_sha256,
         fv.content_type AS f_content_type, fv.is_binary AS f_is_binary, fv.data AS f_data, fv.blob_key AS f_blob_key
  FROM ${access_and_branch_from}
  LEFT JOIN LATERAL (
    SELECT at.at, v.content_sha256, v.content_type, v.is_binary, c.data, c.blob_key
    FROM (SELECT coalesce($5::bigint, b.head_sequence) AS at) at
    LEFT JOIN LATERAL (
      (SELECT f.content_sha256, f.content_type, f.is_binary, 0 AS layer FROM file_changes f
       WHERE f.branch_id = b.id AND f.path = $4 AND f.sequence BETWEEN coalesce(e.own_from, 0) AND at.at
       ORDER BY f.sequence DESC LIMIT 1)
      UNION ALL
      (SELECT f.content_sha256, f.content_type, f.is_binary, 1 AS layer FROM file_changes f
       WHERE f.branch_id = m.id AND f.path = $4 AND f.sequence <= least(e.base_sequence, at.at)
       ORDER BY f.sequence DESC LIMIT 1)
      ORDER BY layer LIMIT 1) v ON true
    LEFT JOIN contents c ON c.repo_id = r.id AND c.sha256 = v.content_sha256) fv ON b.id IS NOT NULL
  WHERE r.name = $1`,
);

interface PrefetchedFileRow {
  f_at: number | null;
  f_sha256: Buffer | null;
  f_content_type: string | null;
  f_is_binary: boolean | null;
  f_data: Buffer | null;
  f_blob_key: string | null;
}

/** A file as the access statement read it, at `at` in the branch's view (see PrefetchedBranch). */
export interface PrefetchedFile {
  path: string;
  at: number;
  /** Null: absent there (never written, or deleted). */
  version: { content_sha256: Buffer; content_type: string; is_binary: boolean } | null;
  data: Buffer | null;
  blobKey: string | null;
}

function prefetchedFile(path: string, r: PrefetchedFileRow): PrefetchedFile | undefined {
  if (r.f_at === null) return undefined;
  const version =
    r.f_sha256 === null
      ? null
      : {
          content_sha256: r.f_sha256,
          content_type: r.f_content_type ?? "",
          is_binary: r.f_is_binary === true,
        };
  return { path, at: r.f_at, version, data: r.f_data, blobKey: r.f_blob_key };
}

/** The branch columns of repo_select_with_access_and_branch, null when there is no such branch. */
interface PrefixedBranch {
  b_id: number | null;
  b_head_sequence: number;
  b_base_sequence: number;
  b_status: BranchRow["status"];
  b_draft: boolean;
  b_head_hash: string;
  b_created_by: string;
  b_created_at: Date;
  b_auto_merge_by: string | null;
  b_auto_merge_at: Date | null;
  main_id: number | null;
  e_from_at: number | null;
  e_base_sequence: number;
  e_own_from: number;
}

function prefetched(name: string, r: PrefixedBranch): PrefetchedBranch {
  const row: BranchRow | null =
    r.b_id === null
      ? null
      : {
          id: r.b_id,
          name,
          head_sequence: r.b_head_sequence,
          base_sequence: r.b_base_sequence,
          status: r.b_status,
          draft: r.b_draft,
          head_hash: r.b_head_hash,
          created_by: r.b_created_by,
          created_at: r.b_created_at,
          auto_merge_by: r.b_auto_merge_by,
          auto_merge_at: r.b_auto_merge_at,
        };
  const epoch =
    r.e_from_at === null
      ? null
      : { from_at: r.e_from_at, base_sequence: r.e_base_sequence, own_from: r.e_own_from };
  return { name, row, mainId: r.main_id, epoch };
}

// The repo, and whether the job still holds the claim its token was issued to: an open event
// stream re-checks access through here, and must close once the job has ended.
const repo_select_for_job = prepared<RepoRow & { running: boolean }>(
  "repo_select_for_job",
  `SELECT r.id, r.name, r.owner, r.created_at, r.created_by,
          EXISTS (SELECT 1 FROM ci_jobs j WHERE j.id = $2 AND j.repo_id = r.id AND j.status = 'claimed'
                  AND j.attempt = $3) AS running
   FROM repos r WHERE r.name = $1`,
);

/**
 * The repo and the caller's effective role on it, or null when no such repo exists. A CI job
 * (job token, `actor.job`) is a reader of its own repo and has no role on any other, whatever roles
 * an identity spelled `ci-job:…` might have been granted; the one write it may make, reporting a
 * check run, is allowed by the access table (shared/http/access.ts, `jobToken`). With `ahead`
 * (not for a job), the same statement reads that branch, and file, too (`RepoAccess.branch`).
 */
export async function findRepoAccess(
  db: Queryable,
  name: string,
  actor: Actor,
  ahead?: ReadAhead,
): Promise<RepoAccess | null> {
  if (actor.job) {
    const row = await firstRowOf(db, repo_select_for_job([name, actor.job.id, actor.job.attempt]));
    if (!row) return null;
    const { running, ...repo } = row;
    return { repo, role: running ? "reader" : null, orgRole: null };
  }
  if (ahead !== undefined) return withBranch(db, name, actor, ahead);
  const row = await firstRowOf(db, repo_select_with_access([name, actor.identity]));
  if (!row) return null;
  const { repo_role, org_role, ...repo } = row;
  return { repo, role: effectiveRole(actor, repo_role, org_role), orgRole: org_role };
}

const effectiveRole = (actor: Actor, repoRole: Role | null, orgRole: OrgRole | null) =>
  higher(higher(repoRole, roleFromOrg(orgRole)), actor.globalAdmin ? "admin" : null);

/** What a read asks the access statement to read as well: its branch, and maybe one file. */
export interface ReadAhead {
  branch: string;
  file?: { path: string; at: number | undefined };
}

async function withBranch(
  db: Queryable,
  name: string,
  actor: Actor,
  ahead: ReadAhead,
): Promise<RepoAccess | null> {
  const { branch, file } = ahead;
  const row: (AccessRow & Partial<PrefetchedFileRow>) | undefined = file
    ? await firstRowOf(
        db,
        repo_select_with_access_and_file([name, actor.identity, branch, file.path, file.at ?? null]),
      )
    : await firstRowOf(db, repo_select_with_access_and_branch([name, actor.identity, branch]));
  if (!row) return null;
  const { id, owner, created_at, created_by, repo_role, org_role } = row;
  const known = prefetched(branch, row);
  if (file && row.f_at !== undefined) known.file = prefetchedFile(file.path, row as PrefetchedFileRow);
  return {
    repo: { id, name: row.name, owner, created_at, created_by },
    role: effectiveRole(actor, repo_role, org_role),
    orgRole: org_role,
    branch: known,
  };
}

/**
 * Resolves `name` for a caller that needs at least `need`; with `ahead`, reads that branch (and
 * file) in the same statement (`RepoAccess.branch`). A repo the caller may not read answers
 * 404 exactly like a missing one, so its existence is not revealed; a readable repo with too low a
 * role answers 403.
 */
export async function requireRepoRole(
  db: Queryable,
  name: string,
  actor: Actor,
  need: Role,
  ahead?: ReadAhead,
): Promise<RepoAccess> {
  const access = await findRepoAccess(db, name, actor, ahead);
  if (!access || !atLeast(access.role, "reader")) fail("REPO_NOT_FOUND", `repo '${name}' not found`);
  if (!atLeast(access.role, need)) fail("FORBIDDEN", `this needs the ${need} role on '${name}'`);
  return access;
}
