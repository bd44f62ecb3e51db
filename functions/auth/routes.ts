import type { IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import { z } from "zod";
import {
  clearCookie,
  cookieName,
  readCookie,
  secureCookies,
  setCookie,
  signCookieValue,
  verifyCookieValue,
} from "../../shared/auth/cookies.ts";
import { CSRF_FIELD, requireCsrfProtection } from "../../shared/auth/csrf.ts";
import { loginStatePending, rememberLoginState, spendLoginState } from "../../shared/auth/login-states.ts";
import {
  exchangeCode,
  pkceChallenge,
  providerEndpoints,
  randomValue,
} from "../../shared/auth/oidc-client.ts";
import { safeReturnTo } from "../../shared/auth/return-to.ts";
import {
  clearSessionCookie,
  createSession,
  findSession,
  revokeSession,
  type Session,
} from "../../shared/auth/sessions.ts";
import { publicUrl } from "../../shared/ci/urls.ts";
import type { AppContext } from "../../shared/context.ts";
import { withTx } from "../../shared/db/tx.ts";
import { DomainError, fail } from "../../shared/errors.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { type AnyRoute, type Reply, route } from "../../shared/http/route.ts";
import { signInNotConfiguredPage } from "../web/pages/setup.ts";
import { SECURITY_HEADERS } from "../web/reply.ts";

/**
 * Browser sign-in (docs/sessions.md): `/auth/login` starts the OAuth 2.0 authorization code flow
 * with PKCE, `state` and `nonce`; `/auth/callback` exchanges the code, verifies the ID token as
 * bearer tokens are verified plus its nonce, and starts a session; `/auth/logout` ends it.
 */

/** What /auth/login keeps for /auth/callback, in a signed cookie of this browser. */
const LOGIN_COOKIE = "quire_login";
const LOGIN_PURPOSE = "login";
/** How long a sign-in may take at the provider. */
const LOGIN_TTL_SECONDS = 600;

const loginState = z.strictObject({
  /** `state`: ties the callback to this browser's own login (no login CSRF). */
  s: z.string(),
  /** `nonce`: ties the ID token to this login (no replayed token). */
  n: z.string(),
  /** The PKCE verifier: only this login can redeem its code. */
  v: z.string(),
  /** Where to go afterwards: a same-origin path (shared/auth/return-to.ts). */
  r: z.string(),
  /** Unix seconds after which the login is void. */
  e: z.number(),
});
type LoginState = z.infer<typeof loginState>;

const noStore = { "cache-control": "no-store" };

/** No OAuth client is configured: a browser gets the page that says how to start instead. */
class SignInNotConfigured extends DomainError {
  constructor() {
    super(
      "UNAVAILABLE",
      "browser sign-in is not configured: set OIDC_CLIENT_ID (docs/sessions.md), or for local development start with DEV_IDENTITY=you@example.com npm start",
    );
  }
}

/** The OAuth client browser sign-in acts as; UNAVAILABLE when none is configured. */
function oauthClient(ctx: AppContext): { clientId: string; clientSecret: string | undefined } {
  const clientId = ctx.config.OIDC_CLIENT_ID;
  if (!clientId) throw new SignInNotConfigured();
  return { clientId, clientSecret: ctx.config.OIDC_CLIENT_SECRET };
}

const wantsHtml = (headers: IncomingHttpHeaders) =>
  /(^|[\s,])text\/html\b/i.test(String(headers.accept ?? ""));

const redirectUri = (ctx: AppContext) => `${publicUrl(ctx)}/auth/callback`;
const loginCookieName = (ctx: AppContext) => cookieName(LOGIN_COOKIE, secureCookies(ctx));

async function startLogin(ctx: AppContext, returnTo: string | undefined): Promise<Reply> {
  const { clientId } = oauthClient(ctx);
  const { authorizationEndpoint } = await providerEndpoints(ctx.config.OIDC_ISSUER);
  const now = ctx.clock.now();
  const state: LoginState = {
    s: randomValue(),
    n: randomValue(),
    v: randomValue(),
    r: safeReturnTo(returnTo),
    e: Math.floor(now.getTime() / 1000) + LOGIN_TTL_SECONDS,
  };
  await rememberLoginState(ctx.pool, state.s, new Date(state.e * 1000), now);
  const payload = Buffer.from(JSON.stringify(state)).toString("base64url");
  const cookie = setCookie(loginCookieName(ctx), await signCookieValue(ctx, LOGIN_PURPOSE, payload), {
    secure: secureCookies(ctx),
    maxAgeSeconds: LOGIN_TTL_SECONDS,
  });
  const url = new URL(authorizationEndpoint);
  const params = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri(ctx),
    scope: "openid email",
    state: state.s,
    nonce: state.n,
    code_challenge: pkceChallenge(state.v),
    code_challenge_method: "S256",
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { status: 302, headers: { location: url.href, ...noStore }, cookies: [cookie] };
}

/** The login this browser started, if its cookie is genuine and not expired. */
async function pendingLogin(ctx: AppContext, cookie: string | undefined): Promise<LoginState | null> {
  if (!cookie) return null;
  const payload = await verifyCookieValue(ctx, LOGIN_PURPOSE, cookie);
  if (payload === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const state = loginState.safeParse(parsed);
  if (!state.success || state.data.e * 1000 <= ctx.clock.now().getTime()) return null;
  return state.data;
}

/**
 * What a provider sends back (RFC 6749 4.1.2, 4.1.2.1, RFC 9207 `iss`) and what Google adds
 * (`scope`, `authuser`, `prompt`, `hd`); anything else is refused as on every route.
 */
const callbackQuery = z.strictObject({
  code: z.string().optional(),
  state: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
  error_uri: z.string().optional(),
  iss: z.string().optional(),
  scope: z.string().optional(),
  authuser: z.string().optional(),
  prompt: z.string().optional(),
  hd: z.string().optional(),
  session_state: z.string().optional(),
});

/** The session of the request's cookie, or null when it has none or it has ended. */
async function liveSession(
  ctx: AppContext,
  headers: Parameters<typeof findSession>[1],
): Promise<Session | null> {
  try {
    return await findSession(ctx, headers);
  } catch (err) {
    if (err instanceof DomainError && err.code === "UNAUTHENTICATED") return null;
    throw err;
  }
}

const ALREADY_USED = "this sign-in was already used, or has failed: start again at /auth/login";

/** The identity the provider signed in for this login: the code exchanged, the ID token verified. */
async function identityFromProvider(
  ctx: AppContext,
  login: LoginState,
  query: z.infer<typeof callbackQuery>,
): Promise<string> {
  if (query.error !== undefined)
    fail("UNAUTHENTICATED", `the identity provider did not sign you in: ${query.error.slice(0, 64)}`);
  if (!query.code) fail("VALIDATION_FAILED", "the callback has no code");
  const { clientId, clientSecret } = oauthClient(ctx);
  const { tokenEndpoint } = await providerEndpoints(ctx.config.OIDC_ISSUER);
  const idToken = await exchangeCode(tokenEndpoint, {
    code: query.code,
    redirectUri: redirectUri(ctx),
    verifier: login.v,
    clientId,
    clientSecret,
  });
  return ctx.auth.idTokens.verify(idToken, undefined, { nonce: login.n });
}

async function finishLogin(
  ctx: AppContext,
  headers: Parameters<typeof findSession>[1],
  query: z.infer<typeof callbackQuery>,
): Promise<Reply> {
  const login = await pendingLogin(ctx, readCookie(headers, loginCookieName(ctx)));
  if (!login)
    fail(
      "VALIDATION_FAILED",
      "no sign-in is in progress in this browser, or it expired: start again at /auth/login",
    );
  if (query.state !== login.s) fail("VALIDATION_FAILED", "the state does not match this browser's sign-in");
  const now = ctx.clock.now();
  // A replayed callback stops here without asking the provider; the DELETE below decides races.
  if (!(await loginStatePending(ctx.pool, login.s, now))) fail("VALIDATION_FAILED", ALREADY_USED);
  let email: string;
  try {
    email = await identityFromProvider(ctx, login, query);
  } catch (err) {
    // A refused sign-in is spent too: its callback URL is never tried a second time.
    await spendLoginState(ctx.pool, login.s, now);
    throw err;
  }
  const previous = await liveSession(ctx, headers);
  // Spending the login and starting the session commit together: of two callbacks carrying the
  // same login (a provider that honours a code twice), exactly one starts a session.
  const session = await withTx(ctx.pool, async (tx) => {
    if (!(await spendLoginState(tx, login.s, now))) fail("VALIDATION_FAILED", ALREADY_USED);
    // A new sign-in in this browser ends the session it had.
    if (previous) await revokeSession(ctx, previous, tx);
    return createSession(ctx, email, tx);
  });
  return { status: 302, headers: { location: login.r, ...noStore }, cookies: [session] };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A page of sign-in itself: no script, no style, no framing; never cached. */
function authPage(status: number, title: string, main: string): Reply {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Quire: ${escapeHtml(title)}</title></head>
<body><main>
${main}
</main></body></html>
`;
  return {
    status,
    stream: Readable.from([Buffer.from(html)]),
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy":
        "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      ...noStore,
    },
  };
}

/** The sign-out page: a form for a signed-in browser (POST with its CSRF token), else a sign-in link. */
function logoutPage(session: Session | null): Reply {
  const main = session
    ? `<h1>Sign out</h1>
<p>Signed in as ${escapeHtml(session.identity)}.</p>
<form method="post" action="/auth/logout">
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(session.csrfToken)}">
<button type="submit">Sign out</button>
</form>`
    : `<h1>Signed out</h1>
<p>You are signed out of Quire. <a href="/auth/login">Sign in</a></p>`;
  return authPage(200, "sign out", main);
}

/** A refused callback as a browser sees it: what went wrong, and the way to start again. */
function signInRefusedPage(err: DomainError): Reply {
  const heading = err.status >= 500 ? "Sign-in is not available" : "Sign-in refused";
  return authPage(
    err.status,
    heading.toLowerCase(),
    `<h1>${heading}</h1>
<p role="alert">${escapeHtml(err.message)} <code>${escapeHtml(err.code)}</code></p>
<p>Nobody was signed in. <a href="/auth/login">Sign in again</a></p>`,
  );
}

/**
 * Sign-in is part of the web group: every reply, refusals and redirects included, carries the
 * pages' security headers (its own pages set a stricter policy of their own), and a browser is
 * shown a refusal as a page. No HEAD: a HEAD
 * of /auth/login or /auth/callback would start or spend a sign-in.
 */
const signInSection = <R extends AnyRoute>(r: R): R => ({
  ...r,
  section: { headers: SECURITY_HEADERS, answersHead: false },
  // A route's own page first (/auth/login's "sign-in is not set up"), else the refusal page.
  errorPage: (err: DomainError, call: Parameters<NonNullable<AnyRoute["errorPage"]>>[1]) =>
    r.errorPage?.(err, call) ?? (wantsHtml(call.headers) ? signInRefusedPage(err) : undefined),
});

export const authRoutes = [
  // The callback first: a deployment check sends the first plain GET of a group without any
  // configuration (scripts/bundle-process.ts probeOf), and it answers JSON 400 without a login.
  route({
    method: "GET",
    path: "/auth/callback",
    access: "public",
    summary: "Finish browser sign-in: exchange the code, verify the ID token, set the session cookie",
    query: callbackQuery,
    responses: { 302: redirect },
    handler: async ({ ctx, headers, query }) => {
      // The login cookie is spent whatever happens: a second try starts again at /auth/login.
      const spent = clearCookie(loginCookieName(ctx), secureCookies(ctx));
      try {
        const reply = await finishLogin(ctx, headers, query);
        return { ...reply, cookies: [spent, ...(reply.cookies ?? [])] };
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500) throw err;
        if (wantsHtml(headers)) {
          const page = signInRefusedPage(err);
          return { ...page, cookies: [spent] };
        }
        return {
          status: err.status,
          body: { code: err.code, error: err.message },
          headers: noStore,
          cookies: [spent],
        };
      }
    },
  }),
  route({
    method: "GET",
    path: "/auth/login",
    access: "public",
    summary: "Start browser sign-in: redirect to the identity provider (authorization code flow with PKCE)",
    query: z.strictObject({
      return_to: z
        .string()
        .optional()
        .meta({ description: "A path of this service to return to; anything else means /" }),
    }),
    responses: { 302: redirect },
    handler: async ({ ctx, query }) => startLogin(ctx, query.return_to),
    errorPage: (err, { headers }) =>
      err instanceof SignInNotConfigured && wantsHtml(headers) ? signInNotConfiguredPage() : undefined,
  }),
  route({
    method: "GET",
    path: "/auth/logout",
    access: "public",
    summary: "The sign-out page: a sign-out form when signed in (nothing changes on GET)",
    responses: { 200: bytes("text/html") },
    handler: async ({ ctx, headers }) => logoutPage(await liveSession(ctx, headers)),
  }),
  route({
    method: "POST",
    path: "/auth/logout",
    access: "public",
    summary: "Sign out: end the session of the cookie (same origin and CSRF token required) and clear it",
    responses: { 303: redirect },
    handler: async ({ ctx, headers, rawBody }) => {
      const session = await liveSession(ctx, headers);
      if (session) {
        requireCsrfProtection(ctx, { headers, body: rawBody }, session.csrfToken);
        await revokeSession(ctx, session);
      }
      return {
        status: 303,
        headers: { location: "/auth/logout", ...noStore },
        cookies: [clearSessionCookie(ctx)],
      };
    },
  }),
].map(signInSection);
