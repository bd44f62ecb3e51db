import { z } from "zod";
import { sequence, timestamp, uuid } from "./wire.ts";

/** The CI scheduler's replies: jobs, claims, tokens, URLs (docs/ci-scheduler.md). */

const triggerType = z.enum(["push", "proposal", "proposal_synchronized", "manual", "schedule"]);

export const jobResponse = z.object({
  id: uuid,
  repo: z.string(),
  branch: z.string(),
  sequence,
  status: z.enum(["queued", "claimed", "passed", "failed"]),
  trigger_type: triggerType,
  trigger_branch: z.string(),
  trigger_base_branch: z.string().nullable(),
  trigger_proposal_id: z.string().nullable(),
  checks: z.array(z.string()),
  attempt: z.int().nonnegative(),
  created_by: z.string(),
  created_at: timestamp,
  queued_at: timestamp,
  claimed_at: timestamp.nullable(),
  claimed_by: z.string().nullable(),
  last_heartbeat_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  error: z.string().nullable(),
});
export type JobResponse = z.output<typeof jobResponse>;

export const claimResponse = jobResponse.extend({
  request_token: z.string(),
  oidc_token_url: z.string(),
  api_url: z.string(),
});
export type ClaimResponse = z.output<typeof claimResponse>;

export const heartbeatResponse = z.object({
  id: uuid,
  status: z.string(),
  last_heartbeat_at: timestamp.nullable(),
});
export type HeartbeatResponse = z.output<typeof heartbeatResponse>;

export const queuedJobsResponse = z.object({
  jobs: z.array(z.object({ id: uuid, trigger_type: triggerType })),
});
export type QueuedJobsResponse = z.output<typeof queuedJobsResponse>;

export const runIdResponse = z.object({ run_id: uuid });
export type RunIdResponse = z.output<typeof runIdResponse>;

export const urlResponse = z.object({ url: z.string() });
export type UrlResponse = z.output<typeof urlResponse>;

export const tokenResponse = z.object({ token: z.string() });
export type TokenResponse = z.output<typeof tokenResponse>;

/** Cloud Scheduler's CI timers. */
export const cronResponse = z.object({ jobs: z.array(uuid) });
export type CronResponse = z.output<typeof cronResponse>;
export const reapResponse = z.object({ requeued: z.array(uuid), failed: z.array(uuid) });
export type ReapResponse = z.output<typeof reapResponse>;

/** The CI job token issuer's discovery document and keys. */
export const openIdConfigurationResponse = z.looseObject({
  issuer: z.string(),
  jwks_uri: z.string(),
  response_types_supported: z.array(z.string()),
  subject_types_supported: z.array(z.string()),
  id_token_signing_alg_values_supported: z.array(z.string()),
});
export type OpenIdConfigurationResponse = z.output<typeof openIdConfigurationResponse>;
export const jwksResponse = z.object({
  keys: z.array(
    z.object({
      kty: z.string(),
      n: z.string(),
      e: z.string(),
      kid: z.string(),
      alg: z.string(),
      use: z.string(),
    }),
  ),
});
export type JwksResponse = z.output<typeof jwksResponse>;
