import { z } from "zod";
import { timestamp, uuid } from "./wire.ts";

export const subscriptionResponse = z.object({
  id: uuid,
  repo: z.string().optional(),
  event_types: z.array(z.string()).optional(),
  backend: z.literal("webhook"),
  /** `secret` only in the reply that created it. */
  config: z.object({ url: z.string(), secret: z.string().optional() }),
  created_at: timestamp,
  created_by: z.string(),
  failure_count: z.int().nonnegative(),
  suspended_at: timestamp.nullable(),
});
export type SubscriptionResponse = z.output<typeof subscriptionResponse>;
export const subscriptionListResponse = z.object({ subscriptions: z.array(subscriptionResponse) });
export type SubscriptionListResponse = z.output<typeof subscriptionListResponse>;

/** Cloud Tasks and Cloud Scheduler's webhook delivery routes. */
export const deliveryTaskResponse = z.object({ result: z.enum(["delivered", "failed", "stale"]) });
export type DeliveryTaskResponse = z.output<typeof deliveryTaskResponse>;
export const sweepResponse = z.object({ deleted: z.int().nonnegative() });
export type SweepResponse = z.output<typeof sweepResponse>;

export const healthResponse = z.object({ status: z.literal("ok") });
export type HealthResponse = z.output<typeof healthResponse>;
