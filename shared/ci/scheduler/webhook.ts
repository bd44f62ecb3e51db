import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { AppContext } from "../../context.ts";
import { fail } from "../../errors.ts";
import { serverSecret } from "../../secrets.ts";
import { signature } from "../../webhooks/send.ts";
import { upsertSystemSubscription } from "../../webhooks/system.ts";
import { runnerUrl } from "../urls.ts";

/**
 * The scheduler's side of the event subscription (SPEC "CI trigger mapping"): the global webhook
 * subscription it registers, and the secret every delivery to `/webhook` must be signed with.
 */

/** The events that can queue CI. */
export const CI_EVENT_TYPES = ["com.svc.commit.created", "com.svc.proposal.opened"] as const;
/** The `system_name` of the scheduler's subscription: there is at most one. */
export const RUNNER_SUBSCRIPTION = "ci-scheduler";
const SECRET_NAME = "ci_webhook_secret";

/**
 * The webhook secret: SVC_CI_WEBHOOK_SECRET, else one generated once and kept in the database,
 * where every instance of the API and of the scheduler finds the same one. There is always a
 * secret, so `/webhook` always verifies: an unsigned delivery is never accepted.
 */
export async function runnerWebhookSecret(ctx: AppContext): Promise<string> {
  if (ctx.config.SVC_CI_WEBHOOK_SECRET) return ctx.config.SVC_CI_WEBHOOK_SECRET;
  return (await serverSecret(ctx, SECRET_NAME)).toString("base64url");
}

/** Refuses a delivery unless `X-Svc-Signature` is the HMAC of exactly these bytes (constant time). */
export async function verifyDelivery(ctx: AppContext, header: string | string[] | undefined, body: Buffer) {
  const given = typeof header === "string" ? Buffer.from(header, "utf8") : null;
  if (given === null) fail("UNAUTHENTICATED", "an event delivery must carry X-Svc-Signature");
  const expected = Buffer.from(signature(await runnerWebhookSecret(ctx), body), "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    fail("UNAUTHENTICATED", "X-Svc-Signature does not match the delivery");
}

/**
 * With RUNNER_URL set, makes sure the scheduler's global subscription exists, once: commit.created
 * and proposal.opened to `<RUNNER_URL>/webhook`, signed with the runner secret. A changed URL or
 * secret updates it in place. Unset, nothing is registered. Returns whether anything changed.
 */
export async function registerRunnerSubscription(ctx: AppContext): Promise<boolean> {
  if (!ctx.config.RUNNER_URL) return false;
  return upsertSystemSubscription(ctx.pool, ctx.clock, {
    name: RUNNER_SUBSCRIPTION,
    eventTypes: CI_EVENT_TYPES,
    url: `${runnerUrl(ctx)}/webhook`,
    secret: await runnerWebhookSecret(ctx),
  });
}

/** The parts of a delivered CloudEvent the scheduler reads. */
export const deliveredEvent = z.object({
  id: z.string().min(1).max(200),
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
});

export const commitCreatedData = z.object({
  repo: z.string(),
  branch: z.string(),
  sequence: z.int().positive(),
});

export const proposalOpenedData = z.object({
  repo: z.string(),
  branch: z.string(),
  base_branch: z.string(),
  proposal_id: z.uuid(),
  sequence: z.int().nonnegative(),
});
