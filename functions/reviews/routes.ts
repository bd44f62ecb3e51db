import { z } from "zod";
import { branchName, sequenceParam } from "../../shared/api/names.ts";
import { reviewListResponse, reviewResponse } from "../../shared/api/review.ts";
import { created, ok, route } from "../../shared/http/route.ts";
import { listReviews, MAX_REVIEW_BODY, reviewStatuses, submitReview } from "../../shared/reviews/reviews.ts";

export const reviewRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/review",
    access: { repo: "writer" },
    summary: "Approve or reject a branch at its current head (authors of its commits cannot approve)",
    body: z.strictObject({
      branch: branchName,
      status: z.enum(reviewStatuses, "must be approved or rejected"),
      body: z.string().max(MAX_REVIEW_BODY, `must be at most ${MAX_REVIEW_BODY} characters`),
    }),
    responses: { 201: reviewResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await submitReview(ctx.pool, actor, repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/branch/:branch*/reviews",
    access: { repo: "reader" },
    summary: "The reviews of a branch at or before a sequence, oldest first, as a bare array",
    params: z.object({ repo: z.string(), branch: branchName }),
    query: z.strictObject({ at: sequenceParam.optional() }),
    responses: { 200: reviewListResponse },
    // The spec says "200 array of reviews": the body is the array itself, not an object around it.
    handler: async ({ ctx, repo, params, query }) =>
      ok(await listReviews(ctx.pool, repo, { branch: params.branch, at: query.at })),
  }),
];
