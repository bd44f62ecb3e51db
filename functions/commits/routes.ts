import { z } from "zod";
import { commitRequest } from "../../shared/api/commits.ts";
import {
  chainResponse,
  commitResponse,
  diffResponse,
  fileHistoryResponse,
  fileResponse,
  treeResponse,
} from "../../shared/api/content.ts";
import { branchName, filePath, limitParam, sequenceParam } from "../../shared/api/names.ts";
import { readChain } from "../../shared/commits/chain.ts";
import { createCommit } from "../../shared/commits/commit.ts";
import { diffBranch } from "../../shared/commits/diff.ts";
import { readFile } from "../../shared/commits/file-read.ts";
import { readCommit, readFileHistory, readTreePage } from "../../shared/commits/reads.ts";
import { parseIfMatch, withBranchTag } from "../../shared/http/conditional.ts";
import { created, ok, route } from "../../shared/http/route.ts";

const fileParams = z.object({ repo: z.string(), path: filePath });
const onBranch = branchName.default("main");

export const commitRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/commit",
    access: { repo: "writer" },
    summary:
      "Commit file changes to a branch (main needs maintainer); a commit that changes nothing is 409 EMPTY_COMMIT",
    etag: "branch-head",
    body: commitRequest,
    base64Fields: ["content"],
    // A new commit is answered as `GET commit/{sequence}` answers it (docs/api.md).
    responses: { 201: commitResponse },
    handler: async ({ ctx, actor, repo, body, headers, decoded }) =>
      created(await createCommit(ctx, actor, repo, body, parseIfMatch(headers), decoded)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/commit/:sequence",
    access: { repo: "reader" },
    summary: "Get a commit by sequence",
    params: z.object({ repo: z.string(), sequence: sequenceParam }),
    responses: { 200: commitResponse },
    handler: async ({ ctx, repo, params }) => ok(await readCommit(ctx.pool, repo, params.sequence)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/tree",
    access: { repo: "reader" },
    summary: "A page of the tree at a branch and sequence",
    query: z.strictObject({
      branch: onBranch,
      at: sequenceParam.optional(),
      limit: limitParam(100, 1000),
      after: filePath.optional(),
    }),
    etag: "branch-head",
    responses: { 200: treeResponse },
    handler: async ({ ctx, repo, query }) => {
      const { page, head } = await readTreePage(ctx, repo, query);
      // The head's tag only for a read of the head: a tree `at` a sequence is not the branch now.
      return query.at === undefined ? withBranchTag(ok(page), head) : ok(page);
    },
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/file/:path*/history",
    access: { repo: "reader" },
    summary: "The commits that changed a file, newest first",
    params: fileParams,
    query: z.strictObject({
      branch: onBranch,
      limit: limitParam(100, 1000),
      after: sequenceParam.optional(),
    }),
    responses: { 200: fileHistoryResponse },
    handler: async ({ ctx, repo, params, query }) =>
      ok({ entries: await readFileHistory(ctx, repo, { ...query, path: params.path }) }),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/file/:path*",
    access: { repo: "reader" },
    prefetch: "file",
    summary: "A file at a branch and sequence",
    params: fileParams,
    query: z.strictObject({ branch: onBranch, at: sequenceParam.optional() }),
    responses: { 200: fileResponse },
    handler: async ({ ctx, repo, params, query }) => readFile(ctx, repo, { ...query, path: params.path }),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/diff",
    access: { repo: "reader" },
    summary: "Files changed on a branch relative to its base on main, and conflicts",
    query: z.strictObject({ branch: branchName }),
    responses: { 200: diffResponse },
    handler: async ({ ctx, repo, query }) => ok(await diffBranch(ctx, repo, query.branch)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/chain",
    access: { repo: "reader" },
    summary: "Commits in a sequence range with everything needed to verify their hash chain",
    query: z.strictObject({ from: sequenceParam.default(1), to: sequenceParam }),
    responses: { 200: chainResponse },
    handler: async ({ ctx, repo, query }) => ok({ commits: await readChain(ctx.pool, repo, query) }),
  }),
];
