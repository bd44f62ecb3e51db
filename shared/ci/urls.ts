import type { AppContext } from "../context.ts";

type UrlContext = Pick<AppContext, "config" | "selfUrl">;

/**
 * The base URLs CI hands out. Each is a setting; unset, it is this process's own address, which
 * is right for `npm start` (every part on one port) and wrong behind a load balancer: set them in
 * every deployment (docs/ci-scheduler.md).
 */

/** The repo API's base ({base_url}): presigned archive URLs and the `api_url` a worker is given. */
export const publicUrl = (ctx: UrlContext): string => ctx.config.SVC_PUBLIC_URL ?? ctx.selfUrl;

/** {oidc_url}: the job-token issuer and the base of its discovery document and JWKS. */
export const jobIssuer = (ctx: UrlContext): string => ctx.config.SVC_OIDC_ISSUER_URL ?? ctx.selfUrl;

/** The token-exchange URL a claim returns: `{oidc_internal_url}/ci/token`. */
export const tokenExchangeUrl = (ctx: UrlContext): string =>
  `${ctx.config.SVC_OIDC_INTERNAL_URL ?? ctx.selfUrl}/ci/token`;

/** Where the scheduler is reached (RUNNER_URL): its webhook, job status and log URLs. */
export const runnerUrl = (ctx: UrlContext): string => ctx.config.RUNNER_URL ?? ctx.selfUrl;
