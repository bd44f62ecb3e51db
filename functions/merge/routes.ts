import { z } from "zod";
import { ignoredAuthor } from "../../shared/api/commits.ts";
import { branchName } from "../../shared/api/names.ts";
import { branchStatusResponse, mergeResponse, rebaseResponse } from "../../shared/api/review.ts";
import { noContent, ok, route } from "../../shared/http/route.ts";
import { disableAutoMerge, enableAutoMerge } from "../../shared/merge/auto-merge.ts";
import { mergeBranch } from "../../shared/merge/merge.ts";
import { rebaseBranch } from "../../shared/merge/rebase.ts";
import { branchStatus } from "../../shared/merge/status.ts";

const onBranch = z.strictObject({ branch: branchName });
const branchParams = z.object({ repo: z.string(), branch: branchName });

export const mergeRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/merge",
    access: { repo: "maintainer" },
    summary:
      "Merge a branch into main after its policies allow it (403 with policy results; 409 with conflicts); dry_run: true answers the same and writes nothing",
    body: onBranch.extend({ dry_run: z.boolean().default(false) }),
    responses: { 200: mergeResponse },
    handler: async ({ ctx, actor, repo, body }) =>
      ok(await mergeBranch(ctx, actor, repo, body.branch, { dryRun: body.dry_run })),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/rebase",
    access: { repo: "maintainer" },
    summary: "Replay a branch's changes onto the current head of main (409 with conflicts)",
    body: onBranch.extend({ author: ignoredAuthor }),
    responses: { 200: rebaseResponse },
    handler: async ({ ctx, actor, repo, body }) => ok(await rebaseBranch(ctx, actor, repo, body.branch)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/branch/:branch*/status",
    access: { repo: "reader" },
    summary: "Evaluate the merge policies and conflicts of a branch without merging",
    params: z.object({ repo: z.string(), branch: branchName }),
    responses: { 200: branchStatusResponse },
    handler: async ({ ctx, actor, repo, params }) => ok(await branchStatus(ctx, actor, repo, params.branch)),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/branch/:branch*/auto-merge",
    access: { repo: "writer" },
    summary:
      "Turn on auto-merge: the branch merges by itself, as the caller, once its policies pass (not main, drafts or inactive branches)",
    params: branchParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, repo, params }) => {
      await enableAutoMerge(ctx, actor, repo, params.branch);
      return noContent();
    },
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/branch/:branch*/auto-merge",
    access: { repo: "writer" },
    summary: "Turn off auto-merge for a branch",
    params: branchParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, repo, params }) => {
      await disableAutoMerge(ctx, actor, repo, params.branch);
      return noContent();
    },
  }),
];
