import { z } from "zod";
import { branchName, filePath, limitParam, sequenceParam } from "../../shared/api/names.ts";
import { bytes } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { comparePage } from "./pages/compare.ts";
import { diffLayoutParam } from "./pages/diff.ts";
import { historyPage } from "./pages/history.ts";
import { treePage } from "./pages/tree.ts";
import { htmlReply } from "./reply.ts";

/** Finding one's way in a repo (docs/web.md): the folder view, the history and compare. */

const HTML = { 200: bytes("text/html") };
const repoParams = z.object({ repo: z.string() });
/** A GET form sends an empty field as "": that is no filter, not a bad value. */
const optionalField = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (v === "" ? undefined : v), schema.optional());
const treeQuery = z.strictObject({
  branch: branchName.default("main"),
  at: optionalField(sequenceParam),
  // The last entry of the previous page: a folder's path ends with "/".
  after: z.string().max(1100).optional(),
  limit: limitParam(100, 1000),
});

export const treeRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/tree",
    access: { repo: "reader" },
    summary: "Web: the root folder of a repo's tree at a branch and sequence",
    params: repoParams,
    query: treeQuery,
    responses: HTML,
    handler: async ({ ctx, actor, repo, query }) =>
      htmlReply(await treePage(ctx, actor, repo, { ...query, folder: "" })),
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/tree/:path*",
    access: { repo: "reader" },
    summary: "Web: a folder of a repo's tree at a branch and sequence, with its README",
    params: z.object({ repo: z.string(), path: filePath }),
    query: treeQuery,
    responses: HTML,
    handler: async ({ ctx, actor, repo, params, query }) =>
      htmlReply(await treePage(ctx, actor, repo, { ...query, folder: params.path })),
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/history",
    access: { repo: "reader" },
    summary: "Web: a repo's commits, newest first, filtered by branch and by file or folder",
    params: repoParams,
    query: z.strictObject({
      branch: optionalField(branchName),
      path: optionalField(filePath),
      before: optionalField(sequenceParam),
    }),
    responses: HTML,
    handler: async ({ ctx, actor, repo, query }) => htmlReply(await historyPage(ctx, actor, repo, query)),
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/compare",
    access: { repo: "reader" },
    summary: "Web: compare two branches or sequences: the commits between and every changed file's diff",
    params: repoParams,
    query: z.strictObject({
      from: optionalField(z.string().max(250)),
      to: optionalField(z.string().max(250)),
      view: diffLayoutParam,
    }),
    responses: HTML,
    handler: async ({ ctx, actor, repo, query }) => {
      const shown = await comparePage(ctx, actor, repo, query);
      return htmlReply(shown.html, shown.status);
    },
  }),
];
