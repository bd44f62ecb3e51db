import { z } from "zod";
import { branchName, filePath } from "../api/names.ts";
import { MAX_COMMENT_BODY } from "./comments.ts";

/** A comment's id: a UUID, so a malformed one is refused before any lookup. */
export const commentId = z.guid("must be a comment id (a UUID)");

/** The body of `POST …/comment`, also what the web's comment and reply forms are checked against. */
export const commentRequest = z.strictObject({
  branch: branchName,
  path: filePath,
  body: z
    .string()
    .min(1, "must not be empty")
    .max(MAX_COMMENT_BODY, `must be at most ${MAX_COMMENT_BODY} characters`),
  /** The comment this one answers: on the same branch and path (checked by addComment). */
  reply_to: commentId.optional(),
});
