import { createHash, randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdTokenVerifier } from "../../shared/auth/idtoken.ts";
import { startTestIdp, type TestIdp } from "../support/idp.ts";

/** The tests' own provider speaks the authorization-code flow as Google does (RFC 6749, 7636). */
describe("test identity provider: authorization code flow", () => {
  let idp: TestIdp;
  const redirectUri = "http://127.0.0.1:1/auth/callback";
  beforeAll(async () => {
    idp = await startTestIdp();
    idp.registerClient({ id: "web", secret: "s3cret", redirectUris: [redirectUri] });
  });
  afterAll(() => idp.close());

  const pkce = () => {
    const verifier = randomBytes(32).toString("base64url");
    return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
  };

  async function authorize(params: Record<string, string>) {
    const url = new URL(idp.authorizationEndpoint);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const res = await fetch(url, { redirect: "manual" });
    return {
      status: res.status,
      location: res.headers.get("location") ? new URL(res.headers.get("location")!) : null,
    };
  }

  const start = async (challenge: string, extra: Record<string, string> = {}) =>
    authorize({
      response_type: "code",
      client_id: "web",
      redirect_uri: redirectUri,
      scope: "openid email",
      state: "st-1",
      nonce: "n-1",
      code_challenge: challenge,
      code_challenge_method: "S256",
      ...extra,
    });

  const token = (form: Record<string, string>) =>
    fetch(idp.tokenEndpoint, { method: "POST", body: new URLSearchParams(form) }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as Record<string, string>,
    }));

  it("lists both endpoints in discovery", async () => {
    const doc = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json();
    expect(doc).toMatchObject({
      authorization_endpoint: idp.authorizationEndpoint,
      token_endpoint: idp.tokenEndpoint,
      code_challenge_methods_supported: ["S256"],
    });
  });

  it("signs in the login_hint, returns state, verifies PKCE, echoes the nonce, and refreshes", async () => {
    const { verifier, challenge } = pkce();
    const back = await start(challenge, { login_hint: "ann@example.com" });
    expect(back.status).toBe(302);
    expect(back.location?.origin + back.location!.pathname).toBe(redirectUri);
    expect(back.location?.searchParams.get("state")).toBe("st-1");
    const code = back.location!.searchParams.get("code")!;
    const form = {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      client_id: "web",
      client_secret: "s3cret",
    };

    const wrong = await token({ ...form, code_verifier: pkce().verifier });
    expect(wrong).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // The failed attempt spent the code: even the right verifier cannot use it now.
    expect((await token({ ...form, code_verifier: verifier })).body.error).toBe("invalid_grant");

    const again = await start(challenge, { login_hint: "ann@example.com" });
    const ok = await token({
      ...form,
      code: again.location!.searchParams.get("code")!,
      code_verifier: verifier,
    });
    expect(ok.status).toBe(200);
    const verify = createIdTokenVerifier({ issuer: idp.issuer, audience: "web" });
    expect(await verify.verify(ok.body.id_token!)).toBe("ann@example.com");
    expect(decodeJwt(ok.body.id_token!).nonce).toBe("n-1");

    const refreshed = await token({
      grant_type: "refresh_token",
      refresh_token: ok.body.refresh_token!,
      client_id: "web",
      client_secret: "s3cret",
    });
    expect(refreshed.status).toBe(200);
    expect(await verify.verify(refreshed.body.id_token!)).toBe("ann@example.com");
    idp.revokeRefreshTokens();
    const revoked = await token({
      grant_type: "refresh_token",
      refresh_token: ok.body.refresh_token!,
      client_id: "web",
      client_secret: "s3cret",
    });
    expect(revoked.body.error).toBe("invalid_grant");
  });

  it("refuses a wrong secret, another redirect_uri, and a missing PKCE challenge", async () => {
    const { verifier, challenge } = pkce();
    idp.signInAs("bob@example.com");
    const code = (await start(challenge)).location!.searchParams.get("code")!;
    const form = {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      client_id: "web",
      code_verifier: verifier,
    };
    expect((await token({ ...form, client_secret: "nope" })).status).toBe(401);
    expect(
      (await token({ ...form, client_secret: "s3cret", redirect_uri: "http://127.0.0.1:1/x" })).body.error,
    ).toBe("invalid_grant");
    expect((await authorize({ client_id: "web", redirect_uri: "http://evil.example/cb" })).status).toBe(400);
    const noPkce = await start("", { code_challenge_method: "plain" });
    expect(noPkce.location?.searchParams.get("error")).toBe("invalid_request");
    idp.signInAs(null);
    expect((await start(challenge)).location?.searchParams.get("error")).toBe("login_required");
  });
});
