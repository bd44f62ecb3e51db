import { z } from "zod";
import { branchName, filePath } from "../../shared/api/names.ts";
import { commentListResponse, commentResponse } from "../../shared/api/review.ts";
import { commentId, commentRequest } from "../../shared/comments/api.ts";
import { addComment, deleteComment, listComments } from "../../shared/comments/comments.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";

export const commentRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/comment",
    access: { repo: "writer" },
    summary:
      "Comment on a file of a branch, at the branch's current head, or reply (reply_to) to a comment on it",
    body: commentRequest,
    responses: { 201: commentResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await addComment(ctx.pool, actor, repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/branch/:branch*/comments",
    access: { repo: "reader" },
    summary: "The comments on a branch, optionally on one file, oldest first",
    params: z.object({ repo: z.string(), branch: branchName }),
    query: z.strictObject({ path: filePath.optional() }),
    responses: { 200: commentListResponse },
    handler: async ({ ctx, repo, params, query }) =>
      ok({ comments: await listComments(ctx.pool, repo, { branch: params.branch, path: query.path }) }),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/comment/:id",
    access: { repo: "writer" },
    summary: "Delete a comment: writers their own, maintainers any",
    params: z.object({ repo: z.string(), id: commentId }),
    responses: { 204: null },
    handler: async ({ ctx, actor, repo, params }) => {
      await deleteComment(ctx.pool, actor, repo, params.id);
      return noContent();
    },
  }),
];
