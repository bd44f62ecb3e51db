import { z } from "zod";
import { branchName } from "../../shared/api/names.ts";
import { ok, route } from "../../shared/http/route.ts";
import { mergeBranch } from "../../shared/merge/merge.ts";
import { rebaseBranch } from "../../shared/merge/rebase.ts";
import { branchStatus } from "../../shared/merge/status.ts";

const onBranch = z.object({ branch: branchName });

export const mergeRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/merge",
    access: { repo: "maintainer" },
    summary:
      "Merge a branch into main after its policies allow it (403 with policy results; 409 with conflicts)",
    body: onBranch,
    handler: async ({ ctx, actor, repo, body }) => ok(await mergeBranch(ctx, actor!, repo!, body.branch)),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/rebase",
    access: { repo: "maintainer" },
    summary: "Replay a branch's changes onto the current head of main (409 with conflicts)",
    body: onBranch,
    handler: async ({ ctx, actor, repo, body }) => ok(await rebaseBranch(ctx, actor!, repo!, body.branch)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/branch/:branch*/status",
    access: { repo: "reader" },
    summary: "Evaluate the merge policies and conflicts of a branch without merging",
    params: z.object({ repo: z.string(), branch: branchName }),
    handler: async ({ ctx, actor, repo, params }) =>
      ok(await branchStatus(ctx, actor!, repo!, params.branch)),
  }),
];
