import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import { z } from "zod";
import { isLoopbackHost } from "../config.ts";
import { DomainError, fail } from "../errors.ts";
import { isPlausibleEmail } from "./email.ts";

const discoverySchema = z.object({ issuer: z.string(), jwks_uri: z.url() });

/** Verifies OpenID Connect ID tokens (RS256) from one issuer and returns the caller's email. */
export interface IdTokenVerifier {
  /**
   * `audience`, when given, replaces the configured one for this token (any one of the list).
   * `expect.nonce`, for an ID token of browser sign-in: its `nonce` claim must equal it.
   */
  verify(token: string, audience?: string[], expect?: { nonce: string }): Promise<string>;
}

/**
 * Finds the issuer's keys through its discovery document (fetched once), keeps them cached, and
 * refetches the key set when a token names a `kid` it has not seen (jose's remote key set does
 * that, at most once per cooldown). Checks signature, `iss`, `exp` and `nbf` and, when a client id
 * is configured, `aud`, and trusts the email only as `claimsOf` says. Google also issues the bare
 * `accounts.google.com` as `iss`.
 */
export function createIdTokenVerifier(opts: {
  issuer: string;
  /** Accepted `aud` values (any one of them); unset: any. */
  audience?: string | string[] | undefined;
  /** Least time between two key-set fetches, so a flood of tokens with made-up `kid`s cannot hammer the provider. */
  refetchCooldownMs?: number;
}): IdTokenVerifier {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  let loading: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  const issuers = [opts.issuer];
  if (opts.issuer === "https://accounts.google.com") issuers.push("accounts.google.com");

  async function discover(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const res = await fetch(`${opts.issuer}/.well-known/openid-configuration`, {
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) throw new Error(`discovery document answered ${res.status}`);
    const doc = discoverySchema.parse(await res.json());
    const jwksUrl = new URL(doc.jwks_uri);
    if (
      jwksUrl.protocol !== "https:" &&
      !(jwksUrl.protocol === "http:" && isLoopbackHost(jwksUrl.hostname))
    ) {
      throw new Error("jwks_uri must be https");
    }
    return createRemoteJWKSet(jwksUrl, {
      cooldownDuration: opts.refetchCooldownMs ?? 30_000,
      cacheMaxAge: 3_600_000,
    });
  }

  async function keySet() {
    if (keys) return keys;
    loading ??= discover().finally(() => {
      loading = undefined;
    });
    keys = await loading;
    return keys;
  }

  return {
    async verify(token, audience, expect) {
      const aud = audience ?? opts.audience;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, await keySet(), {
          issuer: issuers,
          algorithms: ["RS256"],
          // OIDC Core 2 makes exp and iat mandatory: a token without exp would never expire.
          requiredClaims: ["exp", "iat", "email"],
          ...(aud ? { audience: aud } : {}),
        }));
      } catch (err) {
        if (err instanceof joseErrors.JOSEError) fail("UNAUTHENTICATED", `invalid ID token: ${err.message}`);
        throw new DomainError("UNAVAILABLE", "the identity provider could not be reached", { cause: err });
      }
      if (expect !== undefined && payload["nonce"] !== expect.nonce)
        fail("UNAUTHENTICATED", "invalid ID token: its nonce is not the one this sign-in sent");
      return emailOf(payload);
    },
  };
}

/**
 * The token's email, trusted only when the provider says it verified it: `email_verified` must be
 * the JSON `true`. A string `"false"`, a `0` or no claim at all would otherwise let anyone who
 * registered an administrator's address unverified at the provider sign in as that administrator.
 * An address no mail system could deliver to (control characters, a NUL, no `@`) is refused too,
 * before it reaches a log line or a query.
 */
function emailOf(payload: JWTPayload): string {
  const { email, email_verified } = payload as Record<string, unknown>;
  if (email_verified !== true)
    fail("UNAUTHENTICATED", "invalid ID token: its email_verified claim is not true");
  if (typeof email !== "string" || !isPlausibleEmail(email))
    fail("UNAUTHENTICATED", "invalid ID token: its email claim is not an email address");
  return email;
}
