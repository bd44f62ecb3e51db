import { Readable } from "node:stream";
import { z } from "zod";
import { claimResponse, heartbeatResponse, jobResponse, queuedJobsResponse } from "../../shared/api/ci.ts";
import { noFields } from "../../shared/api/strict.ts";
import { checkName } from "../../shared/checks/names.ts";
import { readLog, requireLog, signedLogUrl, verifyLogSignature } from "../../shared/ci/jobs/logs.ts";
import { claimJob, completeJob, getRun, heartbeatJob, readableJob } from "../../shared/ci/jobs/operations.ts";
import { finalStatuses } from "../../shared/ci/jobs/records.ts";
import { handleDelivery } from "../../shared/ci/scheduler/triggers.ts";
import { verifyDelivery } from "../../shared/ci/scheduler/webhook.ts";
import { fail } from "../../shared/errors.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { noContent, ok, route, type SignatureCheck } from "../../shared/http/route.ts";

const jobParams = z.object({ id: z.uuid("must be a job id (a UUID)") });

/** A signed log URL names its job and check: the signature is over both. */
const checkLogSignature: SignatureCheck = (ctx, params, { sig, expires }) =>
  verifyLogSignature(ctx, { jobId: params["id"] ?? "", checkName: params["check"] ?? "", sig, expires });

/**
 * The CI scheduler (docs/ci-scheduler.md): event intake, the worker protocol (claim, heartbeat,
 * complete) and job status with its log proxy. Internal only in the cloud, where it is one
 * function; locally on the same port as the API.
 */
export const schedulerRoutes = [
  route({
    method: "POST",
    path: "/webhook",
    // No caller identity: the delivery proves itself with X-Svc-Signature over its exact bytes.
    access: "public",
    summary: "Receives event deliveries (signed with X-Svc-Signature) and queues the CI jobs they trigger",
    responses: { 200: queuedJobsResponse },
    handler: async ({ ctx, headers, rawBody }) => {
      const body = rawBody ?? Buffer.alloc(0);
      await verifyDelivery(ctx, headers["x-svc-signature"], body);
      let event: unknown;
      try {
        event = JSON.parse(body.toString("utf8"));
      } catch {
        fail("MALFORMED_JSON", "the delivery is not valid JSON");
      }
      const outcome = await handleDelivery(ctx, event);
      return ok({ jobs: outcome?.kind === "queued" ? outcome.jobs : [] });
    },
  }),
  route({
    method: "POST",
    path: "/claim",
    access: "worker",
    summary:
      "Claims the oldest queued job: the job, a one-time request_token and oidc_token_url; 204 when none is queued",
    body: noFields,
    responses: { 200: claimResponse, 204: null },
    handler: async ({ ctx, worker }) => {
      const claim = await claimJob(ctx, worker);
      return claim ? ok(claim) : noContent();
    },
  }),
  route({
    method: "POST",
    path: "/jobs/:id/heartbeat",
    access: "requestToken",
    summary: "Keeps a claimed job alive (request token of that job)",
    params: jobParams,
    body: noFields,
    responses: { 200: heartbeatResponse },
    handler: async ({ ctx, job, params }) => ok(await heartbeatJob(ctx, job, params.id)),
  }),
  route({
    method: "POST",
    path: "/jobs/:id/complete",
    access: "requestToken",
    summary: "Records a claimed job's final status, passed or failed (request token of that job)",
    params: jobParams,
    body: z.strictObject({
      status: z.enum(finalStatuses, "must be passed or failed"),
      error: z.string().max(4096, "must be at most 4096 characters").optional(),
    }),
    responses: { 200: jobResponse },
    handler: async ({ ctx, job, params, body }) => ok(await completeJob(ctx, job, params.id, body)),
  }),
  route({
    method: "GET",
    path: "/run/:id",
    access: "user",
    summary: "A CI job's status; reader or higher on its repo",
    params: jobParams,
    responses: { 200: jobResponse },
    handler: async ({ ctx, actor, params }) => ok(await getRun(ctx, actor, params.id)),
  }),
  route({
    method: "GET",
    path: "/run/:id/logs/:check*",
    // The signed form needs no credentials (shared/http/access.ts checks the signature).
    access: { signedUrl: checkLogSignature },
    summary:
      "A check's log: a reader of the repo is redirected to a signed URL of the stored log (valid 15 minutes), which serves it",
    params: z.object({ id: z.uuid("must be a job id (a UUID)"), check: checkName }),
    query: z.strictObject({
      expires: z
        .string()
        .regex(/^\d{1,15}$/, "must be a Unix time in seconds")
        .transform(Number)
        .optional(),
      sig: z.string().max(256).optional(),
    }),
    responses: { 200: bytes("text/plain"), 302: redirect },
    handler: async ({ ctx, actor, params }) => {
      // No caller: the access check has verified the URL's signature.
      if (actor === null) {
        const log = await readLog(ctx, params.id, params.check);
        // Logs are served as plain text whatever was uploaded: a worker-supplied type such as
        // text/html would run script on this origin.
        const headers = {
          "content-type": "text/plain; charset=utf-8",
          "content-length": String(log.body.length),
          "x-content-type-options": "nosniff",
          "content-security-policy": "sandbox",
        };
        return { status: 200, stream: Readable.from([log.body]), headers };
      }
      await readableJob(ctx, actor, params.id);
      await requireLog(ctx, params.id, params.check);
      return { status: 302, headers: { location: await signedLogUrl(ctx, params.id, params.check) } };
    },
  }),
];
