import { z } from "zod";
import { sequence, timestamp } from "./wire.ts";

export const repoResponse = z.object({
  name: z.string(),
  owner: z.string(),
  created_at: timestamp,
  created_by: z.string(),
});
export type RepoResponse = z.output<typeof repoResponse>;
export const repoListResponse = z.object({ repos: z.array(repoResponse) });
export type RepoListResponse = z.output<typeof repoListResponse>;

export const branchResponse = z.object({
  name: z.string(),
  head_sequence: sequence,
  base_sequence: sequence,
  status: z.enum(["active", "merged", "abandoned"]),
  draft: z.boolean(),
  created_by: z.string(),
  created_at: timestamp,
  /** True while the branch merges by itself once its policies pass (docs/auto-merge.md). */
  auto_merge: z.boolean(),
  /** Who turned auto-merge on, and when: null while it is off. */
  auto_merge_by: z.string().nullable(),
  auto_merge_at: timestamp.nullable(),
});
export type BranchResponse = z.output<typeof branchResponse>;
export const branchListResponse = z.object({ branches: z.array(branchResponse) });
export type BranchListResponse = z.output<typeof branchListResponse>;

export const roleResponse = z.object({
  identity: z.string(),
  role: z.enum(["reader", "writer", "maintainer", "admin"]),
  granted_at: timestamp,
  granted_by: z.string(),
});
export type RoleResponse = z.output<typeof roleResponse>;
export const roleListResponse = z.object({ roles: z.array(roleResponse) });
export type RoleListResponse = z.output<typeof roleListResponse>;
