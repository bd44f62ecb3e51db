import { meResponse } from "../../shared/api/cli-auth.ts";
import { ok, route } from "../../shared/http/route.ts";

/**
 * `GET /me` (docs/api.md, "Who am I"): the caller as the server knows it, so `quire whoami` shows
 * the server's view rather than guessing from a token, and says so when a development server
 * (DEV_IDENTITY) makes everyone one identity. In the `meta` group: the URL map's default service
 * serves it in the cloud without a rule of its own.
 */
export const meRoutes = [
  route({
    method: "GET",
    path: "/me",
    access: "user",
    summary: "Who the server takes the caller to be",
    responses: { 200: meResponse },
    handler: async ({ ctx, actor }) =>
      ok({
        identity: actor.identity,
        global_admin: actor.globalAdmin,
        via: ctx.config.DEV_IDENTITY
          ? ("dev_identity" as const)
          : actor.session
            ? ("session" as const)
            : ("bearer" as const),
      }),
  }),
];
