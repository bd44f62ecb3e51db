import { z } from "zod";
import { runIdResponse, urlResponse } from "../../shared/api/ci.ts";
import { booleanParam, branchName } from "../../shared/api/names.ts";
import { noFields } from "../../shared/api/strict.ts";
import { checkName } from "../../shared/checks/names.ts";
import { storeLog } from "../../shared/ci/jobs/logs.ts";
import { presignJobArchive, requireJobRepo } from "../../shared/ci/jobs/operations.ts";
import { manualRun } from "../../shared/ci/scheduler/triggers.ts";
import { created, ok, route } from "../../shared/http/route.ts";

/** What CI jobs and people ask of a repo for CI: a manual run, the archive and check logs. */
export const ciRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/ci/run",
    access: { repo: "writer" },
    summary: "Queues a manual CI run of a branch at its head, whatever the 'on' block says; returns run_id",
    body: z.strictObject({ branch: branchName }),
    responses: { 201: runIdResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await manualRun(ctx, actor, repo, body.branch)),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/archive/presign",
    access: "requestToken",
    summary:
      "A presigned archive URL (1 hour) of the job's branch at its pinned sequence; request token of a job of this repo",
    params: z.object({ repo: z.string() }),
    body: noFields,
    responses: { 200: urlResponse },
    handler: async ({ ctx, job, params }) => ok(await presignJobArchive(ctx, job, params.repo)),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/check/:check*/logs",
    access: "requestToken",
    summary:
      "Stores the log of one of the job's checks (the raw body) and returns its URL; `partial=true`: the log so far of a running check (capped per minute, refused once the whole log is in); request token of a job of this repo",
    params: z.object({ repo: z.string(), check: checkName }),
    query: z.strictObject({ partial: booleanParam.default(false) }),
    responses: { 201: urlResponse },
    handler: async ({ ctx, job, params, query, rawBody, headers }) => {
      requireJobRepo(job, params.repo);
      const url = await storeLog(ctx, {
        jobId: job.id,
        checkName: params.check,
        body: rawBody ?? Buffer.alloc(0),
        contentType: headers["content-type"] ?? "text/plain",
        final: !query.partial,
        attempt: job.attempt,
      });
      return created({ url });
    },
  }),
];
