import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../support/app.ts";
import { client } from "../support/client.ts";
import type { TokenOptions } from "../support/idp.ts";
import { errorOf } from "../support/world.ts";

/**
 * The claims an ID token must carry before its email is trusted as an identity (docs/access.md,
 * "Who is calling"). Each bad token answers 401 UNAUTHENTICATED, never 200 and never 500.
 */
describe("ID token claims", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ OIDC_CLIENT_ID: "quire-test" });
  });
  afterAll(() => app.close());

  const signIn = async (email: string, opts?: TokenOptions) =>
    client(app.url, async () => app.idp.token(email, opts)).get("/orgs");

  it("accepts a token with email_verified true, exp, iat and a plain email", async () => {
    expect((await signIn("ann@example.com")).status).toBe(200);
  });

  it.each([
    ["the string 'false'", "false"],
    ["the string 'true'", "true"],
    ["0", 0],
    ["1", 1],
    ["null", null],
  ])(
    "refuses email_verified %s: an administrator's address registered unverified is not the administrator",
    async (_, value) => {
      const res = await signIn(ADMIN, { claims: { email_verified: value as never } });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: "UNAUTHENTICATED", error: expect.stringMatching(/email_verified/) });
    },
  );

  it("refuses a token without email_verified", async () => {
    const res = await signIn(ADMIN, { omit: ["email_verified"] });
    expect(res.status).toBe(401);
    expect(errorOf(res).error).toMatch(/email_verified/);
  });

  it.each(["exp", "iat", "email"] as const)("refuses a token without %s", async (claim) => {
    const res = await signIn("ann@example.com", { omit: [claim] });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: "UNAUTHENTICATED", error: expect.stringContaining(claim) });
  });

  it("refuses a token that is not valid yet (nbf in the future)", async () => {
    const res = await signIn("ann@example.com", { claims: { nbf: Math.floor(Date.now() / 1000) + 3600 } });
    expect(res.status).toBe(401);
    expect(errorOf(res).code).toBe("UNAUTHENTICATED");
  });

  it.each([
    ["a NUL", "ann\u0000@example.com"],
    ["a newline", "ann@example.com\n"],
    ["a tab", "ann\t@example.com"],
    ["DEL", "ann\u007f@example.com"],
    ["a C1 control", "ann\u0085@example.com"],
    ["a lone surrogate", "ann\udc00@example.com"],
    ["a space", "ann smith@example.com"],
    ["no @", "ann.example.com"],
    ["two @", "ann@b@example.com"],
    ["an empty local part", "@example.com"],
    ["an empty domain", "ann@"],
    ["an overlong address", `${"a".repeat(64)}@${"b".repeat(250)}.com`],
  ])("refuses an email with %s with 401, not 500", async (_, email) => {
    const res = await signIn(email);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: "UNAUTHENTICATED", error: expect.stringMatching(/email/) });
  });

  it("refuses an email claim that is not a string", async () => {
    const res = await signIn("ann@example.com", { claims: { email: 42 as never } });
    expect(res.status).toBe(401);
  });
});
