import { z } from "zod";
import { branchName, filePath, limitParam, sequenceParam } from "../../shared/api/names.ts";
import { searchResponse } from "../../shared/api/search.ts";
import { resolveView } from "../../shared/commits/view.ts";
import { ok, route } from "../../shared/http/route.ts";
import { searchInView, searchTerm } from "../../shared/search/search.ts";

/** Search of file contents at a branch and sequence (docs/search.md), as the web page runs it. */
export const searchRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/search",
    access: { repo: "reader" },
    summary: "Files whose text at a branch and sequence contains a term, with their matching lines",
    query: z.strictObject({
      q: searchTerm,
      branch: branchName.default("main"),
      at: sequenceParam.optional(),
      after: filePath.optional(),
      limit: limitParam(20, 100),
    }),
    responses: { 200: searchResponse },
    handler: async ({ ctx, repo, query }) => {
      const view = await resolveView(ctx.pool, repo.repo.id, query.branch, query.at);
      const found = await searchInView(ctx.pool, repo.repo.id, view, { term: query.q, ...query });
      return ok({
        results: found.hits.map((hit) => ({
          path: hit.path,
          lines: hit.lines.map((l) => ({ number: l.number, text: l.parts.map((p) => p.text).join("") })),
          line_count: hit.lineCount,
        })),
        more: found.more,
        capped: found.capped,
      });
    },
  }),
];
