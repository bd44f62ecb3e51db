import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";

/**
 * A small OpenID Connect identity provider for tests: a discovery document, a JWKS and RS256 ID
 * tokens for any email. It speaks the same protocol as Google's, so Quire's verifier runs unchanged.
 */
export interface TestIdp {
  issuer: string;
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

let kidCounter = 0;
async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = `test-key-${++kidCounter}`;
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" } };
}

export async function startTestIdp(opts: { audience?: string } = {}): Promise<TestIdp> {
  let key = await newKey();
  const server = http.createServer((req, res) => {
    if (req.url === "/.well-known/openid-configuration") {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          issuer: idp.issuer,
          jwks_uri: `${idp.issuer}/jwks.json`,
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      );
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

  const idp: TestIdp = {
    issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
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
