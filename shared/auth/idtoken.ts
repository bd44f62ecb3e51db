import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import { z } from "zod";
import { isLoopbackHost } from "../config.ts";
import { DomainError, fail } from "../errors.ts";

const discoverySchema = z.object({ issuer: z.string(), jwks_uri: z.url() });

/** Verifies OpenID Connect ID tokens (RS256) from one issuer and returns the caller's email. */
export interface IdTokenVerifier {
  verify(token: string): Promise<string>;
}

/**
 * Finds the issuer's keys through its discovery document (fetched once), keeps them cached, and
 * refetches the key set when a token names a `kid` it has not seen (jose's remote key set does
 * that, at most once per cooldown). Checks signature, `exp`, `iss` and, when a client id is
 * configured, `aud`. Google also issues the bare `accounts.google.com` as `iss`.
 */
export function createIdTokenVerifier(opts: {
  issuer: string;
  audience?: string | undefined;
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
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, await keySet(), {
          issuer: issuers,
          algorithms: ["RS256"],
          ...(opts.audience ? { audience: opts.audience } : {}),
        }));
      } catch (err) {
        if (err instanceof joseErrors.JOSEError) fail("UNAUTHENTICATED", `invalid ID token: ${err.message}`);
        throw new DomainError("UNAVAILABLE", "the identity provider could not be reached", { cause: err });
      }
      if (typeof payload["email"] !== "string" || payload["email"] === "") {
        fail("UNAUTHENTICATED", "the ID token has no email claim");
      }
      if (payload["email_verified"] === false)
        fail("UNAUTHENTICATED", "the ID token's email is not verified");
      return payload["email"];
    },
  };
}
