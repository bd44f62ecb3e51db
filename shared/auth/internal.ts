import type { IncomingHttpHeaders } from "node:http";
import type { Env } from "../config.ts";
import { fail } from "../errors.ts";
import { type InternalVerifier, trustNetwork } from "../http/access.ts";
import type { AnyRoute } from "../http/route.ts";
import { createIdTokenVerifier } from "./idtoken.ts";

export interface InternalTokenOptions {
  /** Who signs the tokens: Google (`https://accounts.google.com`), or a test issuer. */
  issuer: string;
  /** The service accounts allowed to call (the tasks' and the scheduler's), compared case-insensitively. */
  invokers: string[];
  /** Accepted `aud` values; empty: the function's own URL, `https://<Host><route path>` or `https://<Host>`. */
  audiences: string[];
}

/**
 * Verifies the Google-signed OIDC token that Cloud Tasks and Cloud Scheduler send with each call
 * (`Authorization: Bearer`): RS256 signature from the issuer's published keys, `iss`, `exp`, `aud`,
 * `email_verified` true, and `email` one of the configured invokers. No or a bad token is 401; a
 * good token of another account is 403. The principal is the invoker's email.
 */
export function createInternalVerifier(opts: InternalTokenOptions): InternalVerifier {
  const tokens = createIdTokenVerifier({ issuer: opts.issuer });
  const invokers = new Set(opts.invokers.map((e) => e.toLowerCase()));
  return async (headers, route) => {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "")?.[1];
    if (token === undefined)
      fail("UNAUTHENTICATED", "an internal route needs 'Authorization: Bearer <Google-signed OIDC token>'");
    const audiences = opts.audiences.length > 0 ? opts.audiences : ownUrls(headers, route);
    const email = await tokens.verify(token, audiences);
    if (!invokers.has(email.toLowerCase()))
      fail("FORBIDDEN", `'${email}' is not an invoker of internal routes (SVC_INTERNAL_INVOKERS)`);
    return { principal: email };
  };
}

/** The URLs a caller may name as the audience when none is configured: the function's own. */
function ownUrls(headers: IncomingHttpHeaders, route: AnyRoute): string[] {
  const host = headers.host;
  if (host === undefined || host === "") return [];
  return [`https://${host}${route.path}`, `https://${host}`];
}

/** The composition root's choice: token verification when invokers are configured, else the network. */
export function internalVerifierFromConfig(config: Env): InternalVerifier {
  if (config.SVC_INTERNAL_INVOKERS.length === 0) return trustNetwork;
  return createInternalVerifier({
    issuer: config.SVC_INTERNAL_ISSUER,
    invokers: config.SVC_INTERNAL_INVOKERS,
    audiences: config.SVC_INTERNAL_AUDIENCE,
  });
}
