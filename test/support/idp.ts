import { createHash, createPublicKey, randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, importPKCS8, type JWK, type JWTPayload, SignJWT } from "jose";
import { inject } from "vitest";

/**
 * A small OpenID Connect identity provider for tests: a discovery document, a JWKS and RS256 ID
 * tokens for any email, and the authorization-code flow (PKCE S256, one-time codes, `nonce`
 * echoed, refresh tokens) for browser sign-in and the CLI. It speaks the same protocol as Google's,
 * so Quire's verifier and its sign-in routes run unchanged. There is no login page: the authorize
 * endpoint signs in the email of its `login_hint` parameter, else the one `signInAs` chose.
 */
export interface TestIdp {
  issuer: string;
  /** `${issuer}/authorize` and `${issuer}/token`, as the discovery document lists them. */
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /**
   * Who the authorize endpoint signs in from now on when a request has no `login_hint`, and what
   * their ID tokens carry (`claims` may override `nonce` or `email_verified`); null: nobody, so
   * authorize redirects back with `error=login_required`.
   */
  signInAs(email: string | null, opts?: TokenOptions): void;
  /**
   * Registers a client: its secret, when given, is then required at the token endpoint
   * (`client_secret_post` or `client_secret_basic`), and its redirect URIs, when given, are the
   * only ones authorize accepts. An unregistered client_id is accepted without a secret.
   */
  registerClient(client: { id: string; secret?: string; redirectUris?: string[] }): void;
  /** Every request the authorize and token endpoints received, oldest first, for assertions. */
  requests: { endpoint: "authorize" | "token"; params: Record<string, string> }[];
  /** Makes every refresh token issued so far invalid, as when the user revokes the grant. */
  revokeRefreshTokens(): void;
  /**
   * With true, a code can be redeemed twice, as a careless provider allows (RFC 6749 says it
   * must not): for tests that the client itself refuses a replayed callback.
   */
  honourCodesTwice(on: boolean): void;
  /** An ID token for `email`, signed with the published key. */
  token(email: string, opts?: TokenOptions): Promise<string>;
  /** Replaces the signing key with a new one (new kid), as a provider does when it rotates. */
  rotate(): Promise<void>;
  /** Signs with a key the JWKS does not publish. */
  tokenFromUnknownKey(email: string): Promise<string>;
  jwksFetches: number;
  close(): Promise<void>;
}

export interface TokenOptions {
  claims?: JWTPayload;
  /** Seconds until expiry; negative: already expired. */
  expiresIn?: number;
  audience?: string;
  /** Another `iss` than this provider's own, signed with its real key. */
  issuer?: string;
  /** Standard claims to leave out altogether, as a careless provider might. */
  omit?: ("exp" | "iat" | "email" | "email_verified")[];
}

interface SigningKey {
  kid: string;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  jwk: JWK;
}

/**
 * The RSA keys the global setup made ahead (test/support/global-setup.ts), in PKCS #8 PEM: an RSA
 * key costs a core a tenth of a second or more, and nearly every file starts a provider. Each is
 * used once in this process, so the providers of one file never share a key; outside vitest (the
 * bench) there are none.
 */
function keysMadeAhead(): string[] {
  try {
    return inject("idpKeys") ?? [];
  } catch {
    return [];
  }
}

let kidCounter = 0;
async function newKey(): Promise<SigningKey> {
  const kid = `test-key-${++kidCounter}`;
  const ahead = keysMadeAhead()[kidCounter - 1];
  if (ahead !== undefined) {
    const jwk = await exportJWK(createPublicKey(ahead));
    return {
      kid,
      privateKey: await importPKCS8(ahead, "RS256"),
      jwk: { ...jwk, kid, alg: "RS256", use: "sig" },
    };
  }
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" } };
}

/** What authorize remembers of a request until its code is redeemed (or expires). */
interface Grant {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce: string | undefined;
  scope: string;
  email: string;
  tokenOptions: TokenOptions;
  expiresAt: number;
}

type IssuedGrant = Omit<Grant, "expiresAt" | "codeChallenge" | "redirectUri">;

/** Codes live this long, as at real providers (Google: a few minutes; RFC 6749 says at most 10). */
const CODE_LIFETIME_MS = 60_000;

const randomToken = () => randomBytes(24).toString("base64url");
const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");
const sameText = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

class OAuthError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(code: string, description: string, status = 400) {
    super(description);
    this.code = code;
    this.status = status;
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.setHeader("cache-control", "no-store");
  res.end(JSON.stringify(body));
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers["content-type"] ?? ""))
    throw new OAuthError("invalid_request", "the token request must be application/x-www-form-urlencoded");
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** What is wrong with an authorization request whose client and redirect URI are fine, if anything. */
function authorizeProblem(q: URLSearchParams): [string, string] | null {
  if (q.get("response_type") !== "code") return ["unsupported_response_type", "response_type must be code"];
  if (!(q.get("scope") ?? "").split(" ").includes("openid"))
    return ["invalid_scope", "scope must include openid"];
  if (q.get("code_challenge_method") !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(q.get("code_challenge") ?? ""))
    return ["invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256"];
  return null;
}

export async function startTestIdp(opts: { audience?: string } = {}): Promise<TestIdp> {
  let key = await newKey();
  let signedIn: { email: string; options: TokenOptions } | null = null;
  const clients = new Map<string, { secret?: string | undefined; redirectUris?: string[] | undefined }>();
  const codes = new Map<string, Grant>();
  const refreshTokens = new Map<string, IssuedGrant>();
  /** Codes redeemed once that may be redeemed once more (honourCodesTwice). */
  let codesTwice = false;
  const redeemedOnce = new Set<string>();

  /**
   * GET /authorize: checks the client and redirect URI (errors there are shown, not redirected,
   * as RFC 6749 4.1.2.1 requires), then redirects back with a code and the client's own `state`.
   */
  function authorize(url: URL, res: http.ServerResponse): void {
    const q = url.searchParams;
    idp.requests.push({ endpoint: "authorize", params: Object.fromEntries(q) });
    const clientId = q.get("client_id") ?? "";
    const redirectUri = q.get("redirect_uri") ?? "";
    const client = clients.get(clientId);
    if (
      clientId === "" ||
      !URL.canParse(redirectUri) ||
      (client?.redirectUris && !client.redirectUris.includes(redirectUri))
    ) {
      sendJson(res, 400, {
        error: "invalid_request",
        error_description: "unknown client_id or redirect_uri",
      });
      return;
    }
    const back = new URL(redirectUri);
    const state = q.get("state");
    if (state !== null) back.searchParams.set("state", state);
    const problem = authorizeProblem(q);
    const hint = q.get("login_hint");
    const who = hint ? { email: hint, options: signedIn?.email === hint ? signedIn.options : {} } : signedIn;
    if (problem || !who) {
      const [error, description] = problem ?? [
        "login_required",
        "nobody is signed in at the test identity provider",
      ];
      back.searchParams.set("error", error);
      back.searchParams.set("error_description", description);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    const codeChallenge = q.get("code_challenge") ?? "";
    const code = randomToken();
    codes.set(code, {
      clientId,
      redirectUri,
      codeChallenge,
      nonce: q.get("nonce") ?? undefined,
      scope: q.get("scope") ?? "openid",
      email: who.email,
      tokenOptions: who.options,
      expiresAt: Date.now() + CODE_LIFETIME_MS,
    });
    back.searchParams.set("code", code);
    res.writeHead(302, { location: back.href }).end();
  }

  /** The client of a token request, authenticated by its secret when it has one. */
  function tokenClient(req: http.IncomingMessage, form: URLSearchParams): string {
    let id = form.get("client_id");
    let secret = form.get("client_secret");
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (basic) {
      const [user, pass] = Buffer.from(basic, "base64").toString("utf8").split(":");
      id = decodeURIComponent(user ?? "");
      secret = decodeURIComponent(pass ?? "");
    }
    if (!id) throw new OAuthError("invalid_client", "client_id is required", 401);
    const expected = clients.get(id)?.secret;
    if (expected !== undefined && (secret === null || !sameText(secret, expected)))
      throw new OAuthError("invalid_client", "the client secret is wrong or missing", 401);
    return id;
  }

  /** An ID token for `grant`, with its `nonce` only in answer to the code (OIDC Core 12.2). */
  async function tokensFor(grant: IssuedGrant, withNonce: boolean) {
    const o = grant.tokenOptions;
    const nonce = withNonce && grant.nonce !== undefined ? { nonce: grant.nonce } : {};
    return {
      access_token: randomToken(),
      token_type: "Bearer",
      expires_in: 3600,
      scope: grant.scope,
      id_token: await sign(key, grant.email, {
        ...o,
        audience: o.audience ?? grant.clientId,
        claims: { ...nonce, ...o.claims },
      }),
    };
  }

  /** POST /token: the authorization_code and refresh_token grants (RFC 6749 4.1.3, 6; RFC 7636). */
  async function token(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      if (req.method !== "POST")
        throw new OAuthError("invalid_request", "the token endpoint takes POST", 405);
      const form = await readForm(req);
      idp.requests.push({ endpoint: "token", params: Object.fromEntries(form) });
      const clientId = tokenClient(req, form);
      const grantType = form.get("grant_type");
      if (grantType === "authorization_code") {
        const code = form.get("code") ?? "";
        const grant = codes.get(code);
        // One use only, whether or not this one succeeds; two when the test asks for a careless provider.
        if (codesTwice && !redeemedOnce.has(code)) redeemedOnce.add(code);
        else codes.delete(code);
        if (!grant || grant.expiresAt < Date.now())
          throw new OAuthError("invalid_grant", "unknown, used or expired code");
        if (grant.clientId !== clientId)
          throw new OAuthError("invalid_grant", "the code was issued to another client");
        if (form.get("redirect_uri") !== grant.redirectUri)
          throw new OAuthError("invalid_grant", "redirect_uri does not match the authorization request");
        const verifier = form.get("code_verifier") ?? "";
        if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !sameText(s256(verifier), grant.codeChallenge))
          throw new OAuthError("invalid_grant", "PKCE verification failed");
        const refreshToken = randomToken();
        refreshTokens.set(refreshToken, grant);
        sendJson(res, 200, { ...(await tokensFor(grant, true)), refresh_token: refreshToken });
      } else if (grantType === "refresh_token") {
        const grant = refreshTokens.get(form.get("refresh_token") ?? "");
        if (!grant || grant.clientId !== clientId)
          throw new OAuthError("invalid_grant", "unknown or revoked refresh token");
        // Google-style: the refresh token stays the same and is not sent again.
        sendJson(res, 200, await tokensFor(grant, false));
      } else {
        throw new OAuthError(
          "unsupported_grant_type",
          "grant_type must be authorization_code or refresh_token",
        );
      }
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      sendJson(res, err.status, { error: err.code, error_description: err.message });
    }
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://idp.invalid");
    if (url.pathname === "/.well-known/openid-configuration") {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          issuer: idp.issuer,
          jwks_uri: `${idp.issuer}/jwks.json`,
          authorization_endpoint: idp.authorizationEndpoint,
          token_endpoint: idp.tokenEndpoint,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic", "none"],
          scopes_supported: ["openid", "email", "profile"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      );
    } else if (url.pathname === "/authorize" && req.method === "GET") {
      authorize(url, res);
    } else if (url.pathname === "/token") {
      token(req, res).catch(() => {
        if (!res.headersSent) sendJson(res, 500, { error: "server_error" });
      });
    } else if (req.url === "/jwks.json") {
      idp.jwksFetches++;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: [key.jwk] }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");

  const sign = (k: SigningKey, email: string, o: TokenOptions = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const omit = new Set(o.omit ?? []);
    const claims: JWTPayload = {
      email,
      email_verified: true,
      iat: now - 5,
      exp: now + (o.expiresIn ?? 3600),
      ...o.claims,
    };
    for (const name of omit) delete claims[name];
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: k.kid, typ: "JWT" })
      .setIssuer(o.issuer ?? idp.issuer)
      .setSubject(`sub-${email}`)
      .setAudience(o.audience ?? opts.audience ?? "quire-test")
      .sign(k.privateKey);
  };

  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: TestIdp = {
    issuer,
    authorizationEndpoint: `${issuer}/authorize`,
    tokenEndpoint: `${issuer}/token`,
    signInAs(email, o = {}) {
      signedIn = email === null ? null : { email, options: o };
    },
    registerClient(c) {
      clients.set(c.id, { secret: c.secret, redirectUris: c.redirectUris });
    },
    requests: [],
    revokeRefreshTokens: () => refreshTokens.clear(),
    honourCodesTwice(on) {
      codesTwice = on;
    },
    jwksFetches: 0,
    token: (email, o) => sign(key, email, o),
    async rotate() {
      key = await newKey();
    },
    async tokenFromUnknownKey(email) {
      return sign(await newKey(), email);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return idp;
}
