import type { Actor } from "../auth/actor.ts";
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
 * check run, is allowed by the access table (shared/http/access.ts, `jobToken`).
 */
export async function findRepoAccess(db: Queryable, name: string, actor: Actor): Promise<RepoAccess | null> {
  if (actor.job) {
    const row = await firstRowOf(db, repo_select_for_job([name, actor.job.id, actor.job.attempt]));
    if (!row) return null;
    const { running, ...repo } = row;
    return { repo, role: running ? "reader" : null, orgRole: null };
  }
  const row = await firstRowOf(db, repo_select_with_access([name, actor.identity]));
  if (!row) return null;
  const { repo_role, org_role, ...repo } = row;
  const role = higher(higher(repo_role, roleFromOrg(org_role)), actor.globalAdmin ? "admin" : null);
  return { repo, role, orgRole: org_role };
}

/**
 * Resolves `name` for a caller that needs at least `need`. A repo the caller may not read answers
 * 404 exactly like a missing one, so its existence is not revealed; a readable repo with too low a
 * role answers 403.
 */
export async function requireRepoRole(
  db: Queryable,
  name: string,
  actor: Actor,
  need: Role,
): Promise<RepoAccess> {
  const access = await findRepoAccess(db, name, actor);
  if (!access || !atLeast(access.role, "reader")) fail("REPO_NOT_FOUND", `repo '${name}' not found`);
  if (!atLeast(access.role, need)) fail("FORBIDDEN", `this needs the ${need} role on '${name}'`);
  return access;
}
