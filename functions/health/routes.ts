import { healthResponse } from "../../shared/api/webhooks.ts";
import { DomainError } from "../../shared/errors.ts";
import { ok, route } from "../../shared/http/route.ts";

export const healthRoutes = [
  route({
    method: "GET",
    path: "/healthz",
    access: "public",
    summary: "Liveness and database reachability",
    responses: { 200: healthResponse },
    handler: async ({ ctx }) => {
      try {
        await ctx.pool.query("SELECT 1");
      } catch (err) {
        throw new DomainError("UNAVAILABLE", "the database does not answer", { cause: err });
      }
      return ok({ status: "ok" });
    },
  }),
];
