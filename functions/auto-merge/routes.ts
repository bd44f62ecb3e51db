import { z } from "zod";
import { deliveryTaskResponse } from "../../shared/api/webhooks.ts";
import { ok, route } from "../../shared/http/route.ts";
import { deliverAutoMergeTask } from "../../shared/merge/auto-merge-tasks.ts";

/**
 * Auto-merge in the deployed form (docs/auto-merge.md): its own internal function, `autoMerge`,
 * whose bundle carries `opa` (an attempt evaluates the merge policies). Cloud Tasks calls it, with
 * the invoker's OIDC token, once per outbox row of the auto-merge system subscription; the load
 * balancer does not route here and the local server does not mount it (its relay does the work).
 * A handled task answers 200, a stale or repeated one too; a 5xx (the database is down) lets Cloud
 * Tasks retry the same task.
 */
export const autoMergeRoutes = [
  route({
    method: "POST",
    path: "/auto-merge-delivery",
    access: "internal",
    summary: "Attempt the auto-merges one event may have made possible (called by Cloud Tasks)",
    body: z.strictObject({ outbox_id: z.number().int().positive(), lease: z.number().int().positive() }),
    responses: { 200: deliveryTaskResponse },
    handler: async ({ ctx, body }) => ok({ result: await deliverAutoMergeTask(ctx, body) }),
  }),
];
