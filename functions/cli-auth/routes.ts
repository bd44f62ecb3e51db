import { cliAuthResponse } from "../../shared/api/cli-auth.ts";
import { fail } from "../../shared/errors.ts";
import { ok, route } from "../../shared/http/route.ts";

/**
 * The CLI's sign-in settings (docs/cli.md, "Sign-in"): the spec says the CLI runs the code flow
 * with a loopback redirect but not how it learns the provider, so the server tells it. Public: it
 * is what a login starts from, and holds nothing a provider's own login page does not show.
 */
export const cliAuthRoutes = [
  route({
    method: "GET",
    path: "/auth/cli",
    access: "public",
    summary: "The identity provider and OAuth client the quire CLI signs in with",
    responses: { 200: cliAuthResponse },
    handler: async ({ ctx }) => {
      const { OIDC_ISSUER, SVC_CLI_CLIENT_ID, SVC_CLI_CLIENT_SECRET } = ctx.config;
      if (!SVC_CLI_CLIENT_ID)
        fail("NOT_FOUND", "CLI sign-in is not configured on this server (SVC_CLI_CLIENT_ID)");
      return ok({
        issuer: OIDC_ISSUER,
        client_id: SVC_CLI_CLIENT_ID,
        ...(SVC_CLI_CLIENT_SECRET ? { client_secret: SVC_CLI_CLIENT_SECRET } : {}),
        scopes: ["openid", "email"],
      });
    },
  }),
];
