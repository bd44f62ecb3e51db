import { z } from "zod";
import { tokenResponse } from "../../shared/api/ci.ts";
import { checkName } from "../../shared/checks/names.ts";
import { issueJobToken } from "../../shared/ci/identity/issue.ts";
import { ok, route } from "../../shared/http/route.ts";

/** The internal token endpoint, {oidc_internal_url} (docs/ci-identity.md). */
export const ciTokenRoutes = [
  route({
    method: "POST",
    path: "/ci/token",
    access: "requestToken",
    summary:
      "Exchanges a job's request token for a job OIDC JWT (RS256, 1 hour) for an audience and, optionally, one check",
    body: z.strictObject({
      audience: z.string().min(1, "must not be empty").max(512, "must be at most 512 characters"),
      check_name: checkName.optional(),
    }),
    responses: { 200: tokenResponse },
    handler: async ({ ctx, job, body }) => ok({ token: await issueJobToken(ctx, job, body) }),
  }),
];
