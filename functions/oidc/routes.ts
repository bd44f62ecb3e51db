import { jwksResponse, openIdConfigurationResponse } from "../../shared/api/ci.ts";
import { jobIssuer } from "../../shared/ci/urls.ts";
import { route } from "../../shared/http/route.ts";

/** Discovery and keys change rarely; verifiers may cache them for five minutes. */
const CACHE = { "cache-control": "public, max-age=300" };

/** The identity endpoints for CI jobs, served at {oidc_url} (docs/ci-identity.md). */
export const oidcRoutes = [
  route({
    method: "GET",
    path: "/.well-known/openid-configuration",
    access: "public",
    summary: "OpenID discovery document of the CI job token issuer",
    responses: { 200: openIdConfigurationResponse },
    handler: async ({ ctx }) => {
      const issuer = jobIssuer(ctx);
      return {
        status: 200,
        headers: CACHE,
        body: {
          issuer,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          response_types_supported: ["id_token"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        },
      };
    },
  }),
  route({
    method: "GET",
    path: "/.well-known/jwks.json",
    access: "public",
    summary: "JSON Web Key Set with the public keys that sign CI job tokens",
    responses: { 200: jwksResponse },
    handler: async ({ ctx }) => ({
      status: 200,
      headers: CACHE,
      body: {
        keys: (await ctx.jobSigner.publicJwks()).map(({ kty, n, e, kid, alg, use }) => ({
          kty,
          n,
          e,
          kid,
          alg,
          use,
        })),
      },
    }),
  }),
];
