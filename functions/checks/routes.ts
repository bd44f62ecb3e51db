import { z } from "zod";
import { branchName, sequenceParam } from "../../shared/api/names.ts";
import { checkRunListResponse, checkRunResponse } from "../../shared/api/review.ts";
import { listCheckRuns, reportCheck } from "../../shared/checks/checks.ts";
import { checkName, checkStatuses, imageDigest, logUrl } from "../../shared/checks/names.ts";
import { created, ok, route } from "../../shared/http/route.ts";

export const checkRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/check",
    access: { repo: "writer" },
    // A CI job's token reports here too, on its own repo and its job's branch only; its default
    // sequence is the job's pinned one, not the head (shared/http/dispatch.ts).
    jobToken: "report",
    summary:
      "Report a check run for a branch at a sequence (default: its head; for a CI job token, the job's pinned sequence); replaces an earlier report of the same check there",
    body: z.strictObject({
      branch: branchName,
      check_name: checkName,
      status: z.enum(checkStatuses, "must be passed, failed or pending"),
      log_url: logUrl.nullable().optional(),
      sequence: z.int("must be a whole number").optional(),
      // A CI job's report names the image its steps ran in (its attestation carries it).
      image_digest: imageDigest.optional(),
    }),
    responses: { 201: checkRunResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await reportCheck(ctx, actor, repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/branch/:branch*/checks",
    access: { repo: "reader" },
    summary: "The check runs of a branch at sequences at or before a sequence, by sequence then name",
    params: z.object({ repo: z.string(), branch: branchName }),
    query: z.strictObject({ at: sequenceParam.optional() }),
    responses: { 200: checkRunListResponse },
    handler: async ({ ctx, repo, params, query }) =>
      ok({ check_runs: await listCheckRuns(ctx.pool, repo, { branch: params.branch, at: query.at }) }),
  }),
];
