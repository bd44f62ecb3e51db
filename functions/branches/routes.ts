import { z } from "zod";
import { booleanParam, branchName } from "../../shared/api/names.ts";
import { abandonBranch } from "../../shared/branches/abandon.ts";
import { createBranch, getBranch, listBranches, promoteBranch } from "../../shared/branches/branches.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";

const branchParams = z.object({ repo: z.string(), branch: branchName });

export const branchRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/branches",
    access: { repo: "reader" },
    summary:
      "List branches by status; drafts only with draft=true, or among the rest with include_draft=true",
    query: z.object({
      status: z
        .enum(["active", "merged", "abandoned"], "must be active, merged or abandoned")
        .default("active"),
      draft: booleanParam.default(false),
      include_draft: booleanParam.default(false),
    }),
    handler: async ({ ctx, repo, query }) =>
      ok({
        branches: await listBranches(ctx.pool, repo!, {
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
    body: z.object({ name: branchName, draft: z.boolean().default(false) }),
    handler: async ({ ctx, actor, repo, body }) => created(await createBranch(ctx.pool, actor!, repo!, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/branch/:branch*",
    access: { repo: "reader" },
    summary: "Get a branch",
    params: branchParams,
    handler: async ({ ctx, repo, params }) => ok(await getBranch(ctx.pool, repo!, params.branch)),
  }),
  route({
    method: "PATCH",
    path: "/repos/:repo*/-/branch/:branch*",
    access: { repo: "writer" },
    summary: "Promote a draft branch to ready ({draft: false})",
    params: branchParams,
    body: z.object({ draft: z.boolean() }),
    handler: async ({ ctx, repo, params, body }) =>
      ok(await promoteBranch(ctx.pool, repo!, params.branch, body.draft)),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/branch/:branch*",
    access: { repo: "maintainer" },
    summary: "Mark a branch abandoned (main cannot be)",
    params: branchParams,
    handler: async ({ ctx, actor, repo, params }) => {
      await abandonBranch(ctx.pool, actor!, repo!, params.branch);
      return noContent();
    },
  }),
];
