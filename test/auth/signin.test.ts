import { createPublicKey } from "node:crypto";
import { PassThrough } from "node:stream";
import { type JWK, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdTokenVerifier } from "../../shared/auth/idtoken.ts";
import { api } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { client } from "../support/client.ts";
import { startTestIdp } from "../support/idp.ts";
import { errorOf, expectOk } from "../support/world.ts";

const whoami = (app: TestApp, token: string) => client(app.url, async () => token).get("/orgs");

describe("ID token sign-in", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ OIDC_CLIENT_ID: "quire-test" });
  });
  afterAll(() => app.close());

  it("accepts an RS256 token from the issuer with our audience, as its email", async () => {
    const res = await whoami(app, await app.idp.token("ann@example.com"));
    expectOk(res, 200);
    const org = await api(app.as("ann@example.com")).post("/orgs", { body: { name: "ann-org" } });
    expect(org.body.created_by).toBe("ann@example.com");
  });

  it("refuses a token for another audience when OIDC_CLIENT_ID is set", async () => {
    const res = await whoami(app, await app.idp.token("ann@example.com", { audience: "someone-else" }));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: "UNAUTHENTICATED", error: expect.stringMatching(/aud/) });
  });

  it("refuses a token signed with the provider's own key but naming another issuer", async () => {
    const res = await whoami(
      app,
      await app.idp.token("ann@example.com", { issuer: "https://evil.example.com" }),
    );
    expect(res.status).toBe(401);
    expect(errorOf(res).error).toMatch(/iss/);
  });

  it("refuses a token whose email is not verified, or that has no email", async () => {
    expect(
      (await whoami(app, await app.idp.token("ann@example.com", { claims: { email_verified: false } })))
        .status,
    ).toBe(401);
    expect((await whoami(app, await app.idp.token("", {}))).status).toBe(401);
  });

  it("refuses unsigned (alg none) tokens and HS256 tokens keyed with the public key", async () => {
    const unsigned = new UnsecuredJWT({ email: "eve@example.com", email_verified: true })
      .setIssuer(app.idp.issuer)
      .setAudience("quire-test")
      .setExpirationTime("1h")
      .encode();
    expect((await whoami(app, unsigned)).status).toBe(401);
    const jwks = (await (await fetch(`${app.idp.issuer}/jwks.json`)).json()) as {
      keys: (JWK & { kid: string; kty: string })[];
    };
    const publicPem = createPublicKey({ key: jwks.keys[0]!, format: "jwk" }).export({
      type: "spki",
      format: "pem",
    });
    const confused = await new SignJWT({ email: "eve@example.com", email_verified: true })
      .setProtectedHeader({ alg: "HS256", kid: jwks.keys[0]!.kid })
      .setIssuer(app.idp.issuer)
      .setAudience("quire-test")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(String(publicPem)));
    expect((await whoami(app, confused)).status).toBe(401);
  });

  it("keeps the provider's keys cached between requests", async () => {
    await whoami(app, await app.idp.token("ann@example.com"));
    const before = app.idp.jwksFetches;
    await whoami(app, await app.idp.token("bob@example.com"));
    expect(app.idp.jwksFetches).toBe(before);
  });
});

describe("ID token verifier", () => {
  it("refetches the key set once when a token names a kid it has not seen (after a rotation)", async () => {
    const idp = await startTestIdp();
    try {
      const verifier = createIdTokenVerifier({ issuer: idp.issuer, refetchCooldownMs: 0 });
      expect(await verifier.verify(await idp.token("ann@example.com"))).toBe("ann@example.com");
      expect(await verifier.verify(await idp.token("ann@example.com"))).toBe("ann@example.com");
      expect(idp.jwksFetches).toBe(1);
      await idp.rotate();
      expect(await verifier.verify(await idp.token("bob@example.com"))).toBe("bob@example.com");
      expect(idp.jwksFetches).toBe(2);
      await expect(verifier.verify(await idp.tokenFromUnknownKey("eve@example.com"))).rejects.toMatchObject({
        code: "UNAUTHENTICATED",
      });
    } finally {
      await idp.close();
    }
  });
});

describe("identity provider outage", () => {
  it("answers 503 UNAVAILABLE, not 401, when the provider cannot be reached", async () => {
    const app = await startTestApp();
    try {
      const token = await app.idp.token("ann@example.com");
      await app.idp.close();
      const res = await whoami(app, token);
      expect(res.status).toBe(503);
      expect(errorOf(res).code).toBe("UNAVAILABLE");
    } finally {
      await app.server.close();
    }
  });
});

describe("DEV_IDENTITY", () => {
  it("treats every request as that identity without a token, and warns loudly at start", async () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on("data", (c: Buffer) => lines.push(c.toString("utf8")));
    const app = await startTestApp({ DEV_IDENTITY: "dev@example.com", LOG_LEVEL: "warn" }, { logTo: out });
    try {
      const res = await api(app.anonymous).post("/orgs", { body: { name: "dev-org" } });
      expectOk(res, 201);
      expect(res.body.created_by).toBe("dev@example.com");
      expect(lines.join("")).toMatch(/"severity":"WARNING".*DEV_IDENTITY is set/);
    } finally {
      await app.close();
    }
  });
});

describe("BOOTSTRAP_ADMIN", () => {
  it("is a global admin: sees and manages every org", async () => {
    const app = await startTestApp({ BOOTSTRAP_ADMIN: "root@example.com" });
    try {
      await api(app.as("owner@example.com")).post("/orgs", { body: { name: "private-org" } });
      expect(
        (await api(app.as("stranger@example.com")).get("/orgs/:org", { params: { org: "private-org" } }))
          .status,
      ).toBe(404);
      const root = app.as("root@example.com");
      expect((await api(root).get("/orgs/:org", { params: { org: "private-org" } })).status).toBe(200);
      expect(
        (await api(root).post("/repos", { body: { owner: "private-org", name: "private-org/r" } })).status,
      ).toBe(201);
    } finally {
      await app.close();
    }
  });
});
