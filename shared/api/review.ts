import { z } from "zod";
import { conflict } from "./content.ts";
import { sequence, timestamp, uuid } from "./wire.ts";

/** What is said and decided about branches: reviews, checks, comments, proposals, releases, merges. */

export const reviewResponse = z.object({
  id: uuid,
  branch: z.string(),
  status: z.enum(["approved", "rejected"]),
  body: z.string(),
  reviewer: z.string(),
  sequence,
  created_at: timestamp,
});
export type ReviewResponse = z.output<typeof reviewResponse>;
export const reviewListResponse = z.array(reviewResponse);
export type ReviewListResponse = z.output<typeof reviewListResponse>;

export const checkRunResponse = z.object({
  id: uuid,
  branch: z.string(),
  check_name: z.string(),
  status: z.enum(["passed", "failed", "pending"]),
  log_url: z.string().nullable(),
  sequence,
  reporter: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type CheckRunResponse = z.output<typeof checkRunResponse>;
export const checkRunListResponse = z.object({ check_runs: z.array(checkRunResponse) });
export type CheckRunListResponse = z.output<typeof checkRunListResponse>;

export const commentResponse = z.object({
  id: uuid,
  branch: z.string(),
  path: z.string(),
  /** The comment this one answers (same branch and path), or null for a comment of its own. */
  reply_to: uuid.nullable(),
  body: z.string(),
  author: z.string(),
  sequence,
  created_at: timestamp,
});
export type CommentResponse = z.output<typeof commentResponse>;
export const commentListResponse = z.object({ comments: z.array(commentResponse) });
export type CommentListResponse = z.output<typeof commentListResponse>;

export const proposalResponse = z.object({
  id: uuid,
  /** 1, 2, 3… per repo in the order proposals were opened; the web shows it as `#12`. */
  number: z.int().positive(),
  repo: z.string(),
  branch: z.string(),
  base_branch: z.string(),
  title: z.string(),
  description: z.string(),
  author: z.string(),
  state: z.enum(["open", "closed", "merged"]),
  created_at: timestamp,
  updated_at: timestamp,
});
export type ProposalResponse = z.output<typeof proposalResponse>;
export const proposalListResponse = z.object({ proposals: z.array(proposalResponse) });
export type ProposalListResponse = z.output<typeof proposalListResponse>;

export const releaseResponse = z.object({
  name: z.string(),
  sequence,
  notes: z.string(),
  created_at: timestamp,
  created_by: z.string(),
});
export type ReleaseResponse = z.output<typeof releaseResponse>;
export const releaseListResponse = z.object({ releases: z.array(releaseResponse) });
export type ReleaseListResponse = z.output<typeof releaseListResponse>;

export const mergeResponse = z.object({
  sequence,
  branch: z.string(),
  merged_by: z.string(),
  proposal_id: z.string().nullable(),
  /** True when nothing was written (`dry_run: true` in the request). */
  dry_run: z.boolean(),
});
export type MergeResponse = z.output<typeof mergeResponse>;

export const rebaseResponse = z.object({
  branch: z.string(),
  new_base_sequence: sequence,
  new_head_sequence: sequence,
  commits_replayed: z.int().nonnegative(),
  /** The branch's record after the rebase, under the names `GET branch` uses (docs/merge.md). */
  base_sequence: sequence,
  head_sequence: sequence,
});
export type RebaseResponse = z.output<typeof rebaseResponse>;

export const policyResult = z.object({ name: z.string(), pass: z.boolean(), reason: z.string() });
export const branchStatusResponse = z.object({
  mergeable: z.boolean(),
  policies: z.array(policyResult),
  conflicts: z.array(conflict),
  /** The OWNERS of the changed paths, read on main at its head (docs/owners.md). */
  owners: z.object({
    /** Each changed path that has owners: the folder prefix whose OWNERS governs it, and who of them approved the head. */
    paths: z.array(
      z.object({
        path: z.string(),
        prefix: z.string(),
        owners: z.array(z.string()),
        approved_by: z.array(z.string()),
      }),
    ),
    /** Lines of those OWNERS files that are not an email (ignored); line 0 for a file too large to read. */
    invalid_lines: z.array(z.object({ file: z.string(), line: z.int().nonnegative(), text: z.string() })),
  }),
  /** Whether the branch merges by itself once mergeable (docs/auto-merge.md), as the origin answers. */
  auto_merge: z.boolean(),
});
export type BranchStatusResponse = z.output<typeof branchStatusResponse>;

export const purgeResponse = z.object({
  older_than: z.string(),
  cutoff: timestamp,
  dry_run: z.boolean(),
  branches: z.array(z.object({ name: z.string(), status: z.string(), closed_at: timestamp })),
  commits: z.int().nonnegative(),
  file_changes: z.int().nonnegative(),
  contents: z.int().nonnegative(),
  bytes: z.int().nonnegative(),
});
export type PurgeResponse = z.output<typeof purgeResponse>;
