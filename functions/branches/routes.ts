import { z } from "zod";
import { booleanParam, branchName } from "../../shared/api/names.ts";
import { branchListResponse, branchResponse } from "../../shared/api/repos.ts";
import { abandonBranch } from "../../shared/branches/abandon.ts";
import { createBranch, getBranch, listBranches, promoteBranch } from "../../shared/branches/branches.ts";
import { withBranchTag } from "../../shared/http/conditional.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";

const branchParams = z.object({ repo: z.string(), branch: branchName });

export const branchRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/branches",
    access: { repo: "reader" },
    summary:
      "List branches by status; drafts only with draft=true, or among the rest with include_draft=true",
    query: z.strictObject({
      status: z
        .enum(["active", "merged", "abandoned"], "must be active, merged or abandoned")
        .default("active"),
      draft: booleanParam.default(false),
      include_draft: booleanParam.default(false),
    }),
    responses: { 200: branchListResponse },
    handler: async ({ ctx, repo, query }) =>
      ok({
        branches: await listBranches(ctx.pool, repo, {
          status: query.status,
          draft: query.draft,
          includeDraft: query.include_draft,
        }),
      }),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/branch",
    access: { repo: "maintainer" },
    summary: "Create a branch at the current head of main",
    body: z.strictObject({ name: branchName, draft: z.boolean().default(false) }),
    responses: { 201: branchResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await createBranch(ctx.pool, actor, repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/branch/:branch*",
    access: { repo: "reader" },
    summary: "Get a branch",
    params: branchParams,
    etag: "branch-head",
    responses: { 200: branchResponse },
    handler: async ({ ctx, repo, params }) => {
      const branch = await getBranch(ctx.pool, repo, params.branch);
      return withBranchTag(ok(branch), branch.head_sequence);
    },
  }),
  route({
    method: "PATCH",
    path: "/repos/:repo*/-/branch/:branch*",
    access: { repo: "writer" },
    summary: "Promote a draft branch to ready ({draft: false})",
    params: branchParams,
    body: z.strictObject({ draft: z.boolean() }),
    responses: { 200: branchResponse },
    handler: async ({ ctx, repo, params, body }) =>
      ok(await promoteBranch(ctx.pool, repo, params.branch, body.draft)),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/branch/:branch*",
    access: { repo: "maintainer" },
    summary: "Mark a branch abandoned (main cannot be)",
    params: branchParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, repo, params }) => {
      await abandonBranch(ctx.pool, actor, repo, params.branch);
      return noContent();
    },
  }),
];
