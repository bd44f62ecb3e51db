import { noFields } from "../../shared/api/strict.ts";
import { subscriptionListResponse, subscriptionResponse } from "../../shared/api/webhooks.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";
import { createSubscriptionRequest, subscriptionParams } from "../../shared/webhooks/api.ts";
import {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
  resumeSubscription,
} from "../../shared/webhooks/subscriptions.ts";

export const subscriptionRoutes = [
  route({
    method: "POST",
    path: "/subscriptions",
    access: "user",
    summary:
      "Create a webhook subscription: with repo, reader or higher on it; without, a global admin. The URL must be http(s) and reach no loopback, private, link-local or metadata address",
    body: createSubscriptionRequest,
    responses: { 201: subscriptionResponse },
    handler: async ({ ctx, actor, body }) => created(await createSubscription(ctx, actor, body)),
  }),
  route({
    method: "GET",
    path: "/subscriptions",
    access: "user",
    summary: "List subscriptions: a global admin sees all, others their own",
    responses: { 200: subscriptionListResponse },
    handler: async ({ ctx, actor }) => ok({ subscriptions: await listSubscriptions(ctx, actor) }),
  }),
  route({
    method: "DELETE",
    path: "/subscriptions/:id",
    access: "user",
    summary: "Delete a subscription and its undelivered events (its creator or a global admin)",
    params: subscriptionParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, params }) => {
      await deleteSubscription(ctx, actor, params.id);
      return noContent();
    },
  }),
  route({
    method: "POST",
    path: "/subscriptions/:id/resume",
    access: "user",
    summary:
      "Resume a suspended subscription (its creator or a global admin): everything held is delivered at once",
    params: subscriptionParams,
    body: noFields,
    responses: { 204: null },
    handler: async ({ ctx, actor, params }) => {
      await resumeSubscription(ctx, actor, params.id);
      return noContent();
    },
  }),
];
