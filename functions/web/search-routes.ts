import { z } from "zod";
import { branchName, filePath, sequenceParam } from "../../shared/api/names.ts";
import { bytes } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { finderPage, searchPage } from "./pages/search.ts";
import { htmlReply } from "./reply.ts";

/**
 * Finding things in a repo (docs/search.md): search of file contents and the file finder, both
 * at a branch and sequence, for anyone who may read the repo. The term is checked by the page,
 * not by the query schema, so a refused one answers 400 with the form holding what was typed.
 */

const repoParams = z.object({ repo: z.string() });
const view = { branch: branchName.default("main"), at: sequenceParam.optional() };
const HTML = { 200: bytes("text/html"), 400: bytes("text/html") };

export const searchRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/search",
    access: { repo: "reader" },
    summary: "Web: search of file contents at a branch and sequence",
    params: repoParams,
    query: z.strictObject({ q: z.string().default(""), ...view, after: filePath.optional() }),
    responses: HTML,
    handler: async ({ ctx, actor, repo, query }) => {
      const shown = await searchPage(ctx, actor, repo, query);
      return htmlReply(shown.page, shown.status);
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/find",
    access: { repo: "reader" },
    summary: "Web: the file finder, paths matching typed text at a branch and sequence",
    params: repoParams,
    query: z.strictObject({ q: z.string().default(""), ...view }),
    responses: HTML,
    handler: async ({ ctx, actor, repo, query }) => {
      const shown = await finderPage(ctx, actor, repo, query);
      return htmlReply(shown.page, shown.status);
    },
  }),
];
