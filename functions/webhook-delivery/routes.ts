import { z } from "zod";
import { deliveryTaskResponse, sweepResponse } from "../../shared/api/webhooks.ts";
import { ok, route } from "../../shared/http/route.ts";

/**
 * The Cloud Tasks side of webhook delivery (SVC_WEBHOOK_DELIVERY=cloudtasks), deployed as its own
 * function that only the tasks' service account may invoke (the platform checks the OIDC token of
 * each task; the load balancer does not route here). These routes are not mounted on the public
 * server. A task's body names one outbox row and the lease it was created for; a task that is
 * stale, or runs twice, does nothing. Every handled task answers 200, since the next attempt is
 * Quire's own task (after the backoff), not a Cloud Tasks retry; a 5xx (the database is down)
 * lets Cloud Tasks retry the same task.
 */
export const webhookDeliveryRoutes = [
  route({
    method: "POST",
    path: "/webhook-delivery",
    access: "internal",
    summary: "Make one webhook delivery attempt (called by Cloud Tasks)",
    body: z.strictObject({ outbox_id: z.number().int().positive(), lease: z.number().int().positive() }),
    responses: { 200: deliveryTaskResponse },
    handler: async ({ ctx, body }) => ok({ result: await ctx.webhooks.deliverTask(body) }),
  }),
  route({
    method: "POST",
    path: "/webhook-sweep",
    access: "internal",
    summary:
      "Create the tasks of rows that have none yet and delete delivered rows past retention (called by Cloud Scheduler)",
    responses: { 200: sweepResponse },
    handler: async ({ ctx }) => {
      await ctx.webhooks.drain();
      return ok({ deleted: await ctx.webhooks.cleanup() });
    },
  }),
];
