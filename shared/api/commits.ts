import { z } from "zod";
import { branchName, filePath } from "./names.ts";

/** Most file changes one commit may carry. */
export const MAX_FILES_PER_COMMIT = 1000;
export const MAX_MESSAGE_LENGTH = 65_536;

// Standard base64 with padding, nothing else: no whitespace, no URL-safe alphabet.
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const fileChange = z.object({
  path: filePath,
  content: z
    .string()
    .refine((s) => base64.test(s), {
      message: "must be standard base64 (A-Z, a-z, 0-9, '+', '/', '=' padding)",
      params: { code: "INVALID_CONTENT" },
    })
    .nullable()
    .optional(),
  content_type: z
    .string()
    .max(255)
    .regex(/^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+"-]+)*$/, "must be a MIME type such as 'text/markdown'")
    .optional(),
});

export const commitRequest = z.object({
  branch: branchName,
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
