import { z } from "zod";
import { type RepoRow, requireRepoRole } from "../../shared/access/roles.ts";
import { branchName, sequenceParam } from "../../shared/api/names.ts";
import { archiveHeaders, archiveStream, planArchive } from "../../shared/archives/archive.ts";
import { verifyArchiveSignature } from "../../shared/archives/presign.ts";
import { MAIN } from "../../shared/branches/branches.ts";
import type { AppContext } from "../../shared/context.ts";
import { fail } from "../../shared/errors.ts";
import type { Call } from "../../shared/http/route.ts";
import { route } from "../../shared/http/route.ts";
import { findRepoByName } from "../../shared/repos/repos.ts";

const archiveQuery = z.object({
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
type ArchiveQuery = z.output<typeof archiveQuery>;
type ArchiveCall = Call<{ repo: string }, ArchiveQuery, undefined>;

/**
 * The presigned form: the signature (over the repo name as given) is checked before the repo is
 * looked up, so a forged URL gets 403 SIGNATURE_INVALID whether or not the repo exists. Only a
 * genuinely signed URL whose repo has since been deleted learns REPO_NOT_FOUND.
 */
async function presignedRepo(ctx: AppContext, name: string, q: ArchiveQuery): Promise<RepoRow> {
  if (q.sig === undefined || q.expires === undefined || q.branch === undefined || q.at === undefined) {
    const missing = (["branch", "at", "expires", "sig"] as const).filter((k) => q[k] === undefined);
    fail(
      "VALIDATION_FAILED",
      `a presigned archive URL needs branch, at, expires and sig; missing: ${missing.join(", ")}`,
    );
  }
  await verifyArchiveSignature(ctx, {
    repo: name,
    branch: q.branch,
    sequence: q.at,
    expires: q.expires,
    sig: q.sig,
  });
  const repo = await findRepoByName(ctx.pool, name);
  if (!repo) fail("REPO_NOT_FOUND", `repo '${name}' not found`);
  return repo;
}

/**
 * The ordinary form: a signed-in reader of the repo (404 for one who may not read it), or a CI job
 * with its job token, which reads its own repo only (`findRepoAccess`). Returns the
 * repo and the caller's identity, which the archive's own log line records (the request log line
 * of a public route has none).
 */
async function readerRepo(ctx: AppContext, name: string, call: ArchiveCall) {
  const actor = await ctx.auth.authenticate(call.headers, ctx);
  if (!actor)
    fail("UNAUTHENTICATED", "sign in: send 'Authorization: Bearer <ID token>', or use a presigned URL");
  const access = await requireRepoRole(ctx.pool, name, actor, "reader");
  return { repo: access.repo, identity: actor.identity };
}

export const archiveRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/archive",
    // Public in the table because the presigned form needs no credentials; the handler
    // authenticates the ordinary form itself (reader or higher).
    access: "public",
    summary:
      "A .tar.gz of the tree at a branch and sequence; reader or higher, or a presigned URL (sig, expires, branch, at) with no credentials",
    params: z.object({ repo: z.string() }),
    query: archiveQuery,
    handler: async (call) => {
      const { ctx, params, query, log } = call;
      const presigned = query.sig !== undefined || query.expires !== undefined;
      const { repo, identity } = presigned
        ? { repo: await presignedRepo(ctx, params.repo, query), identity: "presigned-url" }
        : await readerRepo(ctx, params.repo, call);
      // Everything that can fail as a JSON error happens up to here; after it, bytes flow.
      const plan = await planArchive(ctx.pool, repo, query.branch ?? MAIN, query.at);
      const stream = archiveStream(ctx, plan, log.child({ identity }));
      return { status: 200, stream, headers: archiveHeaders(plan) };
    },
  }),
];
