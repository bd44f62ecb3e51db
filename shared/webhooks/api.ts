import { z } from "zod";
import { repoName } from "../api/names.ts";
import { eventTypes } from "../events/types.ts";
import { MAX_URL_LENGTH } from "./guard.ts";

/** Longest webhook secret accepted. */
export const MAX_SECRET_LENGTH = 256;

/** `POST /subscriptions`. */
export const createSubscriptionRequest = z.strictObject({
  repo: repoName.optional(),
  event_types: z
    .array(z.enum(eventTypes, { error: (issue) => `unknown event type ${JSON.stringify(issue.input)}` }))
    .min(1, "must list at least one event type (omit it for every type)")
    .max(100)
    .transform((types) => [...new Set(types)])
    .optional(),
  backend: z.literal("webhook", { error: "must be 'webhook'" }),
  config: z.strictObject({
    url: z.string().min(1, "must not be empty").max(MAX_URL_LENGTH),
    secret: z.string().max(MAX_SECRET_LENGTH).optional(),
  }),
});

export type CreateSubscriptionRequest = z.output<typeof createSubscriptionRequest>;

/** `/subscriptions/{id}`: an id that is not a UUID names no subscription. */
export const subscriptionParams = z.object({
  id: z.string().refine((s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s), {
    message: "no such subscription",
    params: { code: "SUBSCRIPTION_NOT_FOUND" },
  }),
});
