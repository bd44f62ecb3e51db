import { z } from "zod";
import { identity, limitParam } from "../api/names.ts";
import { proposalId, proposalTitle } from "../proposals/api.ts";
import { ISSUE_PAGE, MAX_ISSUE_PAGE } from "./page.ts";

/** Limits of an issue's fields (docs/issues.md). */
export const MAX_ISSUE_BODY = 65_536;
export const MAX_LABELS = 20;
export const MAX_LABEL_LENGTH = 50;
export const MAX_ASSIGNEES = 10;

export const issueStates = ["open", "closed"] as const;
export const closeReasons = ["completed", "not_planned", "duplicate"] as const;

/** An issue number in a path: `#12` is `12`. */
export const issueNumber = z
  .string()
  .regex(/^[1-9]\d{0,14}$/, "must be a positive whole number")
  .transform(Number);

const issueBody = z.string().max(MAX_ISSUE_BODY, `must be at most ${MAX_ISSUE_BODY} characters`);

/** A label: printable, no commas (the CLI and the web take a comma-separated list). */
export const label = z
  .string()
  .trim()
  .min(1, "must not be blank")
  .max(MAX_LABEL_LENGTH, `must be at most ${MAX_LABEL_LENGTH} characters`)
  .regex(/^[^,\p{Cc}]+$/u, "must not contain commas or control characters");

/** A set of labels or assignees: sorted and without repeats, so equal sets compare equal. */
const set = <T extends z.ZodType<string>>(item: T, max: number) =>
  z
    .array(item)
    .max(max, `must have at most ${max} entries`)
    .transform((xs) => [...new Set(xs)].sort());

const labels = set(label, MAX_LABELS);
const assignees = set(identity, MAX_ASSIGNEES);

export const openIssueRequest = z.strictObject({
  title: proposalTitle,
  body: issueBody.default(""),
  labels: labels.default([]),
  assignees: assignees.default([]),
});
export type OpenIssueRequest = z.output<typeof openIssueRequest>;

export const patchIssueRequest = z
  .strictObject({
    title: proposalTitle.optional(),
    body: issueBody.optional(),
    labels: labels.optional(),
    assignees: assignees.optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), "must set title, body, labels or assignees");
export type PatchIssueRequest = z.output<typeof patchIssueRequest>;

/** The origin system's close body: a reason, `completed` when none is sent. */
export const closeIssueRequest = z.strictObject({
  reason: z.enum(closeReasons, "must be completed, not_planned or duplicate").default("completed"),
});

/** The most issues one page holds when a `limit` is sent; the web's page holds 50. */

/**
 * The API's list. Without `limit` it answers every issue that matches, as the origin system's
 * list does (its clients send `state` and `author`, never a page size, and read one answer as
 * the whole list); with `limit` it answers a page, the next one asked for with `before`.
 */
export const issueListQuery = z.strictObject({
  /** `open` (the default, as in the origin system), `closed` or `all`. */
  state: z.enum([...issueStates, "all"], "must be open, closed or all").default("open"),
  label: label.optional(),
  assignee: identity.optional(),
  author: identity.optional(),
  limit: z
    .string()
    .regex(/^\d{1,6}$/, "must be a whole number")
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_ISSUE_PAGE, `must be between 1 and ${MAX_ISSUE_PAGE}`)
    .optional(),
  /** The next page: issues numbered below this (the last number of a full page). */
  before: issueNumber.optional(),
});
export type IssueListQuery = z.output<typeof issueListQuery>;
/** The web's list: always a page, of 50 unless `limit` says otherwise. */
export const issuePageQuery = issueListQuery.extend({ limit: limitParam(ISSUE_PAGE, MAX_ISSUE_PAGE) });

export const issueCommentRequest = z.strictObject({
  body: z
    .string()
    .max(MAX_ISSUE_BODY, `must be at most ${MAX_ISSUE_BODY} characters`)
    .refine((s) => s.trim() !== "", "must not be blank"),
});
export type IssueCommentRequest = z.output<typeof issueCommentRequest>;

/**
 * A link made by hand (the origin system's `POST …/issues/{n}/refs`): a commit by its sequence or a
 * proposal by its id, both as strings, as the origin's clients send them.
 */
export const issueLinkRequest = z
  .discriminatedUnion(
    "ref_type",
    [
      z.strictObject({
        ref_type: z.literal("commit"),
        ref_id: z.string().regex(/^[1-9]\d{0,14}$/, "must be a commit's sequence, a whole number from 1"),
      }),
      z.strictObject({ ref_type: z.literal("proposal"), ref_id: proposalId }),
    ],
    { error: "ref_type must be commit or proposal" },
  )
  .transform((l) => (l.ref_type === "commit" ? { ...l, sequence: Number(l.ref_id) } : l));
export type IssueLinkRequest = z.output<typeof issueLinkRequest>;
