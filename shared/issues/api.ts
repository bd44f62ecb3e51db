import { z } from "zod";
import { identity, limitParam } from "../api/names.ts";
import { proposalTitle } from "../proposals/api.ts";

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

export const issueListQuery = z.strictObject({
  /** `open` (the default, as in the origin system), `closed` or `all`. */
  state: z.enum([...issueStates, "all"], "must be open, closed or all").default("open"),
  label: label.optional(),
  assignee: identity.optional(),
  author: identity.optional(),
  limit: limitParam(50, 200),
  /** The next page: issues numbered below this (the last number of a full page). */
  before: issueNumber.optional(),
});
export type IssueListQuery = z.output<typeof issueListQuery>;

export const issueCommentRequest = z.strictObject({
  body: z
    .string()
    .max(MAX_ISSUE_BODY, `must be at most ${MAX_ISSUE_BODY} characters`)
    .refine((s) => s.trim() !== "", "must not be blank"),
});
export type IssueCommentRequest = z.output<typeof issueCommentRequest>;
