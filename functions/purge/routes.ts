import { z } from "zod";
import { purgeResponse } from "../../shared/api/review.ts";
import { ok, route } from "../../shared/http/route.ts";
import { purgeRepo } from "../../shared/purge/purge.ts";

export const purgeRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/purge",
    access: { repo: "admin" },
    summary: "Remove merged and abandoned branches closed longer ago than older_than (dry_run reports only)",
    body: z.strictObject({
      older_than: z.string().min(1, "must be a duration such as 720h"),
      dry_run: z.boolean().default(false),
    }),
    responses: { 200: purgeResponse },
    handler: async ({ ctx, actor, repo, body }) => ok(await purgeRepo(ctx, actor, repo, body)),
  }),
];
