import { generateKeyPairSync, randomUUID } from "node:crypto";
import { SignJWT, UnsecuredJWT } from "jose";
import { expect, it } from "vitest";
import { type JobTokenClaims, signJobToken } from "../../shared/ci/identity/jwt.ts";
import { jobIssuer } from "../../shared/ci/urls.ts";
import type { TestApp } from "../support/app.ts";
import type { Res } from "../support/client.ts";
import type { TestIdp } from "../support/idp.ts";

/** What the common checks need: the app (and its identity provider) and a second, foreign provider. */
export interface CommonAuthContext {
  app: TestApp;
  /** Another identity provider the app does not trust (its issuer and keys are unknown to the app). */
  foreignIdp: TestIdp;
}

/** Sends the endpoint's request with this Authorization header value, or none when undefined. */
export type SendWithAuthorization = (authorization: string | undefined) => Promise<Res>;

/** A signed-in identity with no role anywhere, used for the tokens of the checks. */
export const PROBE_IDENTITY = "probe@authz.test";

/** An `alg: none` token with otherwise valid claims for `issuer`. */
export function unsignedToken(issuer: string, email: string): string {
  return new UnsecuredJWT({ email, email_verified: true })
    .setIssuer(issuer)
    .setSubject(`sub-${email}`)
    .setAudience("quire-test")
    .setIssuedAt()
    .setExpirationTime("1h")
    .encode();
}

const bearer = async (token: Promise<string> | string) => `Bearer ${await token}`;

/** Claims of a job token of the app's issuer and audience for a job Quire never issued one to. */
function jobClaims(app: TestApp): JobTokenClaims {
  const ctx = app.server.ctx;
  return {
    iss: jobIssuer(ctx),
    sub: "repo:acme/docs:branch:main",
    aud: ctx.config.SVC_JOB_API_AUDIENCE,
    jti: randomUUID(),
    job_id: randomUUID(),
    repo: "acme/docs",
    org: "acme",
    branch: "main",
    ref_type: "branch",
    sequence: 1,
  };
}

/** A job token of the app's issuer under its current kid, signed by a key it never published. */
async function forgedJobToken(app: TestApp): Promise<string> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = await app.server.ctx.jobSigner.keyId();
  return new SignJWT({ ...jobClaims(app) })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid })
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(privateKey);
}

/** Each way of sending missing or bad credentials, and the Authorization header it sends. */
const badCredentials: [string, (c: CommonAuthContext) => Promise<string | undefined>][] = [
  ["no Authorization header", async () => undefined],
  ["a malformed header 'Basic x'", async () => "Basic x"],
  ["a malformed header 'Bearer' alone", async () => "Bearer"],
  [
    "a token signed by a key the issuer does not publish",
    (c) => bearer(c.app.idp.tokenFromUnknownKey(PROBE_IDENTITY)),
  ],
  ["an expired token", (c) => bearer(c.app.idp.token(PROBE_IDENTITY, { expiresIn: -60 }))],
  ["a token from another issuer", (c) => bearer(c.foreignIdp.token(PROBE_IDENTITY))],
  ["an unsigned alg:none token", async (c) => bearer(unsignedToken(c.app.idp.issuer, PROBE_IDENTITY))],
  [
    "a token whose email is not verified",
    (c) => bearer(c.app.idp.token(PROBE_IDENTITY, { claims: { email_verified: false } })),
  ],
  ["a job token signed by a key the app does not publish", (c) => bearer(forgedJobToken(c.app))],
  [
    "an expired job token signed by the app's own key",
    (c) =>
      bearer(signJobToken(c.app.server.ctx.jobSigner, jobClaims(c.app), new Date(Date.now() - 2 * 3600_000))),
  ],
  [
    "a job token signed by the app's own key that the app never issued",
    (c) => bearer(signJobToken(c.app.server.ctx.jobSigner, jobClaims(c.app), new Date())),
  ],
];

/**
 * The credential checks every non-public endpoint must pass: missing, malformed, wrongly signed,
 * expired, foreign, unsigned and unverified credentials, and job tokens that are forged, expired or
 * were never issued, all answer 401 with the one error shape
 * `{code: "UNAUTHENTICATED", error}`. A control request with a valid token checks that the 401s
 * come from the credentials and not from the request itself. Routes that a CI job's request token
 * or a CI worker authenticates give their own `control`, and for them a valid ID token is one more
 * credential that must get 401. Call inside a `describe`; `send` is called once per check, so it
 * may build a fresh request each time.
 */
export function runCommonAuthTests(
  ctx: () => CommonAuthContext,
  sendWith: SendWithAuthorization,
  control?: { what: string; authorization: () => string },
): void {
  const cases = control
    ? [...badCredentials, ["a valid ID token of the app's issuer", validIdToken] as const]
    : badCredentials;
  it.each(cases)("%s → 401 UNAUTHENTICATED", async (_, authorization) => {
    const res = await sendWith(await authorization(ctx()));
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(res.body).toEqual({ code: "UNAUTHENTICATED", error: expect.any(String) });
  });

  it(`control: ${control?.what ?? "a valid token from the app's issuer"} is not refused with 401`, async () => {
    const res = await sendWith(control ? control.authorization() : await validIdToken(ctx()));
    expect(res.status, JSON.stringify(res.body)).not.toBe(401);
    expect(res.status).toBeLessThan(500);
  });
}

const validIdToken = (c: CommonAuthContext) => bearer(c.app.idp.token(PROBE_IDENTITY));
