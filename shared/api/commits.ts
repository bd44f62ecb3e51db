import { z } from "zod";
import { branchName, filePath } from "./names.ts";
import { unwritablePathProblem } from "./path-rules.ts";

/** Most file changes one commit may carry. */
export const MAX_FILES_PER_COMMIT = 1000;
export const MAX_MESSAGE_LENGTH = 65_536;

const MAX_CONTENT_TYPE_LENGTH = 255;

/** A character that is neither in the base64 alphabet nor padding. */
const notBase64 = /[^A-Za-z0-9+/=]/;

/**
 * Standard base64 with padding, nothing else: no whitespace, no URL-safe alphabet. In linear
 * time and constant stack on any length (a body may hold 32 MiB of it): one search for a
 * character outside the alphabet, which cannot backtrack, then where the first `=` is. (A pattern
 * that repeats a 4-character group overflowed the stack on a few MB; searching a slice of the
 * string instead of the string itself took ten times as long.)
 */
function isStandardBase64(s: string): boolean {
  if (s.length % 4 !== 0 || notBase64.test(s)) return false;
  const padding = s.indexOf("=");
  if (padding === -1) return true;
  // "xxx=" or "xx==": padding only in the last two places, and nothing after it but padding.
  return padding >= s.length - 2 && s.endsWith("=");
}

export const fileChange = z
  .strictObject({
    path: filePath,
    content: z
      .string()
      .refine(isStandardBase64, {
        message: "must be standard base64 (A-Z, a-z, 0-9, '+', '/', '=' padding)",
        params: { code: "INVALID_CONTENT" },
      })
      .nullable()
      .optional(),
    content_type: z
      .string()
      // abort: the pattern below runs only on a string of bounded length.
      .max(MAX_CONTENT_TYPE_LENGTH, { abort: true })
      .regex(
        /^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+"-]+)*$/,
        "must be a MIME type such as 'text/markdown'",
      )
      .optional(),
  })
  // Only a write: a path written before these rules can still be deleted.
  .superRefine((change, ctx) => {
    const problem = change.content == null ? null : unwritablePathProblem(change.path);
    if (problem)
      ctx.addIssue({
        code: "custom",
        path: ["path"],
        message: `'${change.path.slice(0, 80)}' ${problem}`,
        params: { code: "INVALID_PATH" },
      });
  });

/**
 * `author` as the spec's origin clients send it on commit and rebase bodies (its Go SDK sends "",
 * its `ds` CLI the local user name). Accepted so those clients work, and never read: the author
 * is always the caller (docs/api.md). Only this named field is let through; any other unknown
 * field is still refused.
 */
export const ignoredAuthor = z.string().max(1024).optional();

export const commitRequest = z.strictObject({
  branch: branchName,
  author: ignoredAuthor,
  /** Commit only if the branch head is still this sequence, else 409 HEAD_MOVED (docs/api.md). */
  expected_head_sequence: z.number().int().min(0).optional(),
  message: z.string().min(1, "must not be empty").max(MAX_MESSAGE_LENGTH),
  files: z
    .array(fileChange)
    .min(1, "must list at least one file change")
    .max(MAX_FILES_PER_COMMIT, `must list at most ${MAX_FILES_PER_COMMIT} file changes`)
    .superRefine((files, ctx) => {
      const seen = new Set<string>();
      files.forEach((f, i) => {
        if (seen.has(f.path))
          ctx.addIssue({
            code: "custom",
            path: [i, "path"],
            message: `'${f.path}' appears twice in one commit`,
            params: { code: "DUPLICATE_PATH" },
          });
        seen.add(f.path);
      });
    }),
});

export type CommitRequest = z.output<typeof commitRequest>;
