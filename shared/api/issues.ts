import { z } from "zod";
import { sequence, timestamp, uuid } from "./wire.ts";

/** Issues, their comments and what mentions them (docs/issues.md). */

/** Labels or assignees typed as `a, b` (the CLI's flags, the web's fields) as `["a", "b"]`. */
export const issueResponse = z.object({
  id: uuid,
  repo: z.string(),
  /** From the repo's one sequence of `#n`, shared with proposals. */
  number: z.int().positive(),
  title: z.string(),
  body: z.string(),
  author: z.string(),
  state: z.enum(["open", "closed"]),
  /** While closed: why (`completed`, `not_planned`, `duplicate`), who closed it and when. */
  close_reason: z.enum(["completed", "not_planned", "duplicate"]).nullable(),
  closed_by: z.string().nullable(),
  closed_at: timestamp.nullable(),
  labels: z.array(z.string()),
  assignees: z.array(z.string()),
  created_at: timestamp,
  updated_at: timestamp,
});
export type IssueResponse = z.output<typeof issueResponse>;
/** A page: a full one (`limit` issues) may have a next, asked for with `before` = its last number. */
export const issueListResponse = z.object({ issues: z.array(issueResponse) });

export const issueCommentResponse = z.object({
  id: uuid,
  issue_id: uuid,
  repo: z.string(),
  body: z.string(),
  author: z.string(),
  created_at: timestamp,
  edited_at: timestamp.nullable(),
});
export type IssueCommentResponse = z.output<typeof issueCommentResponse>;
export const issueCommentListResponse = z.object({ comments: z.array(issueCommentResponse) });

/**
 * A reference from an issue in the origin system's shape: `ref_type` `commit` (`ref_id` its
 * sequence) or `proposal` (`ref_id` its id). A link made by hand has its own `id` (a UUID); one
 * found as `#n` in a text is named after its target (`commit:12`) and dated by it.
 */
export const issueRefResponse = z.object({
  id: z.string(),
  issue_id: uuid,
  repo: z.string(),
  ref_type: z.enum(["commit", "proposal"]),
  ref_id: z.string(),
  created_at: timestamp,
});

/** Where `#n` is written: commits (any branch), proposals' descriptions, other issues and comments. */
export const mentionsResponse = z.object({
  commits: z.array(z.object({ sequence, branch: z.string(), message: z.string(), author: z.string() })),
  proposals: z.array(z.object({ number: z.int().positive(), title: z.string(), state: z.string() })),
  issues: z.array(z.object({ number: z.int().positive(), title: z.string(), state: z.string() })),
  /** The commits and proposals again (found or linked), as the origin's `GET …/issues/{n}/refs` answers them. */
  refs: z.array(issueRefResponse),
});
/** With dates as Date until JSON renders them. */
export type MentionsResponse = Omit<z.output<typeof mentionsResponse>, "refs"> & {
  refs: (Omit<z.output<typeof mentionsResponse>["refs"][number], "created_at"> & { created_at: Date })[];
};
