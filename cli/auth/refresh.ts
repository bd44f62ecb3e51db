import { CliError } from "../errors.ts";
import type { CredentialStore, Session } from "./store.ts";

/** Refresh this long before the ID token expires, so a request never carries one about to lapse. */
const MARGIN_SECONDS = 120;

/** The `exp` of a JWT (unverified: the server verifies; the CLI only needs to know when to refresh). */
export function expiryOf(jwt: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8")) as {
      exp?: unknown;
    };
    return typeof payload.exp === "number" ? payload.exp : undefined;
  } catch {
    return undefined;
  }
}

/** The answer of an OAuth token endpoint (RFC 6749 §5.1, with OpenID's `id_token`). */
export interface TokenAnswer {
  id_token?: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

/** POSTs a form to a token endpoint; throws a CliError with the provider's error otherwise. */
export async function tokenRequest(endpoint: string, form: Record<string, string>): Promise<TokenAnswer> {
  const res = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  let body: TokenAnswer;
  try {
    body = JSON.parse(text) as TokenAnswer;
  } catch {
    body = { error: `HTTP ${res.status}`, error_description: text.slice(0, 200) };
  }
  if (!res.ok || body.error)
    throw new CliError(
      `the identity provider refused: ${body.error ?? res.status}${body.error_description ? ` (${body.error_description})` : ""}`,
      { hint: "sign in again with `quire login`" },
    );
  return body;
}

/** The session's ID token, refreshed first when it expires within the margin (and saved). */
export async function freshIdToken(
  store: CredentialStore,
  server: string,
  s: Session,
  now = Date.now(),
): Promise<string> {
  if (s.expires_at - MARGIN_SECONDS > now / 1000) return s.id_token;
  if (!s.refresh_token)
    throw new CliError(`your sign-in to ${server} has expired`, { hint: `run \`quire login ${server}\`` });
  const answer = await tokenRequest(s.token_endpoint, {
    grant_type: "refresh_token",
    refresh_token: s.refresh_token,
    client_id: s.client_id,
    ...(s.client_secret ? { client_secret: s.client_secret } : {}),
  });
  if (!answer.id_token)
    throw new CliError("the identity provider answered the refresh without an ID token", {
      hint: `run \`quire login ${server}\``,
    });
  const refreshed: Session = {
    ...s,
    id_token: answer.id_token,
    // Providers may rotate the refresh token; keep the old one when they do not send one.
    refresh_token: answer.refresh_token ?? s.refresh_token,
    expires_at: expiryOf(answer.id_token) ?? Math.floor(now / 1000) + (answer.expires_in ?? 3600),
  };
  await store.save(server, refreshed, false);
  return refreshed.id_token;
}
