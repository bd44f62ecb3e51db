import { z } from "zod";
import type { RepoRow } from "../../shared/access/roles.ts";
import { branchName, sequenceParam } from "../../shared/api/names.ts";
import { archiveHeaders, archiveStream, planArchive } from "../../shared/archives/archive.ts";
import { MAIN } from "../../shared/branches/branches.ts";
import type { AppContext } from "../../shared/context.ts";
import { bytes } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import type { Logger } from "../../shared/log.ts";

const archiveQuery = z.strictObject({
  branch: branchName.optional(),
  at: sequenceParam.optional(),
  expires: z
    .string()
    .regex(/^\d{1,15}$/, "must be a Unix time in seconds")
    .transform(Number)
    .optional(),
  // Its format is checked with the signature, so a malformed one is SIGNATURE_INVALID, not a 400.
  sig: z.string().max(256, "must be at most 256 characters").optional(),
});

/**
 * The archive of (branch, at) as a streamed reply. Everything that can fail as an error (no such
 * branch, a sequence beyond its head) fails before the first byte; after it, bytes flow.
 */
export async function archiveReply(
  ctx: AppContext,
  repo: RepoRow,
  view: { branch: string; at?: number | undefined },
  log: Logger,
  identity: string,
) {
  const plan = await planArchive(ctx.pool, repo, view.branch, view.at);
  const stream = archiveStream(ctx, plan, log.child({ identity }));
  return { status: 200 as const, stream, headers: archiveHeaders(plan) };
}

export const archiveRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/archive",
    // The presigned form needs no credentials; the signature is checked before the repo is
    // looked up (shared/http/access.ts).
    access: { repo: "reader", orPresigned: true },
    summary:
      "A .tar.gz of the tree at a branch and sequence; reader or higher, or a presigned URL (sig, expires, branch, at) with no credentials",
    params: z.object({ repo: z.string() }),
    query: archiveQuery,
    responses: { 200: bytes("application/gzip") },
    handler: async ({ ctx, query, log, actor, repoRow }) => {
      // The archive's own log line records who read it (a presigned read's request log line has
      // no identity).
      const identity = actor?.identity ?? "presigned-url";
      return archiveReply(ctx, repoRow, { branch: query.branch ?? MAIN, at: query.at }, log, identity);
    },
  }),
];
