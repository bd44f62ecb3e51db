import { z } from "zod";

/** `GET /auth/cli`: which identity provider and OAuth client `quire login` uses (docs/cli.md). */
export const cliAuthResponse = z.object({
  issuer: z.string().meta({ description: "The OpenID issuer; its discovery document names the endpoints" }),
  client_id: z.string(),
  client_secret: z
    .string()
    .optional()
    .meta({ description: "Only where the provider wants one from native apps; not confidential" }),
  scopes: z.array(z.string()),
});
export type CliAuthResponse = z.output<typeof cliAuthResponse>;

/** `GET /me`: who the server takes the caller to be (`quire whoami`). */
export const meResponse = z.object({
  identity: z.string().meta({ description: "The caller's identity: an email" }),
  global_admin: z.boolean(),
  via: z
    .enum(["bearer", "session", "job", "dev_identity"])
    .meta({ description: "How the caller was known: a bearer ID token, a browser session, or DEV_IDENTITY" }),
});
export type MeResponse = z.output<typeof meResponse>;
