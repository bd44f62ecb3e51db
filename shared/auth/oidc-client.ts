import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { isLoopbackHost } from "../config.ts";
import { DomainError, fail } from "../errors.ts";

/**
 * The relying-party side of the OAuth 2.0 authorization code flow with PKCE (RFC 6749, RFC 7636,
 * OpenID Connect Core 3.1): the provider's endpoints from its discovery document, and the code
 * exchanged for an ID token at its token endpoint.
 */

const endpoint = z.url().refine((v) => {
  const url = new URL(v);
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}, "must be https");

const discoverySchema = z.object({ authorization_endpoint: endpoint, token_endpoint: endpoint });
const tokenResponse = z.object({ id_token: z.string().min(1) });
const tokenError = z.object({ error: z.string(), error_description: z.string().optional() });

export interface ProviderEndpoints {
  authorizationEndpoint: string;
  tokenEndpoint: string;
}

// Per issuer, fetched once per process; a failed fetch is forgotten so the next sign-in retries.
const discovered = new Map<string, Promise<ProviderEndpoints>>();

async function discover(issuer: string): Promise<ProviderEndpoints> {
  const res = await fetch(`${issuer}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw new Error(`discovery document answered ${res.status}`);
  const doc = discoverySchema.parse(await res.json());
  return { authorizationEndpoint: doc.authorization_endpoint, tokenEndpoint: doc.token_endpoint };
}

/** The issuer's authorization and token endpoints; UNAVAILABLE when its discovery fails. */
export async function providerEndpoints(issuer: string): Promise<ProviderEndpoints> {
  let found = discovered.get(issuer);
  if (!found) {
    found = discover(issuer);
    discovered.set(issuer, found);
    found.catch(() => discovered.delete(issuer));
  }
  try {
    return await found;
  } catch (err) {
    throw new DomainError("UNAVAILABLE", "the identity provider's discovery document could not be read", {
      cause: err,
    });
  }
}

/** Unguessable text for `state`, `nonce` and the PKCE verifier: 32 random bytes, base64url. */
export const randomValue = (): string => randomBytes(32).toString("base64url");

/** The PKCE S256 challenge of a verifier. */
export const pkceChallenge = (verifier: string): string =>
  createHash("sha256").update(verifier).digest("base64url");

/**
 * Exchanges an authorization code for the provider's ID token (not yet verified). A refusal by the
 * provider (a used code, a wrong verifier) is UNAUTHENTICATED; the provider unreachable, UNAVAILABLE.
 */
export async function exchangeCode(
  tokenEndpoint: string,
  grant: {
    code: string;
    redirectUri: string;
    verifier: string;
    clientId: string;
    clientSecret?: string | undefined;
  },
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: grant.code,
    redirect_uri: grant.redirectUri,
    client_id: grant.clientId,
    code_verifier: grant.verifier,
  });
  if (grant.clientSecret !== undefined) form.set("client_secret", grant.clientSecret);
  let res: Response;
  let body: unknown;
  try {
    res = await fetch(tokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: form,
      signal: AbortSignal.timeout(10_000),
    });
    body = await res.json();
  } catch (err) {
    throw new DomainError("UNAVAILABLE", "the identity provider's token endpoint could not be reached", {
      cause: err,
    });
  }
  if (res.ok) {
    const parsed = tokenResponse.safeParse(body);
    if (parsed.success) return parsed.data.id_token;
    fail("UNAUTHENTICATED", "the identity provider's token response has no ID token");
  }
  const refusal = tokenError.safeParse(body);
  if (res.status >= 500 || !refusal.success)
    throw new DomainError("UNAVAILABLE", `the identity provider's token endpoint answered ${res.status}`);
  const why = refusal.data.error_description ? ` (${refusal.data.error_description.slice(0, 200)})` : "";
  fail(
    "UNAUTHENTICATED",
    `the identity provider refused the sign-in: ${refusal.data.error.slice(0, 64)}${why}`,
  );
}
