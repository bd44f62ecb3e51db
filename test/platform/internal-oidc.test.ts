import { getTestServer } from "@google-cloud/functions-framework/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { startTestIdp, type TestIdp } from "../support/idp.ts";
import { useFixture } from "../support/world.ts";

/**
 * The private functions check the Google-signed OIDC token of Cloud Tasks and Cloud Scheduler in
 * code (SVC_INTERNAL_INVOKERS): here a local issuer stands in for Google (SVC_INTERNAL_ISSUER), and
 * the calls go through the functions framework's own server, as in the cloud.
 */
const INVOKER = "quire-tasks@proj.iam.gserviceaccount.com";
const AUDIENCE = "https://webhooks.example.test/webhook-sweep";
const saved = { ...process.env };
const app = useFixture(() => startTestApp());
let google: TestIdp;

beforeAll(async () => {
  google = await startTestIdp();
  Object.assign(process.env, {
    DATABASE_URL: app.databaseUrl,
    LOG_LEVEL: "error",
    SVC_INTERNAL_INVOKERS: `other@proj.iam.gserviceaccount.com, ${INVOKER.toUpperCase()}`,
    SVC_INTERNAL_ISSUER: google.issuer,
    SVC_INTERNAL_AUDIENCE: AUDIENCE,
  });
  delete process.env["RUNNER_URL"];
  await import("../../functions/index.ts");
});
afterAll(async () => {
  process.env = saved;
  await google.close();
});

async function sweep(authorization?: string) {
  return callInternal("webhookDelivery", "/webhook-sweep", authorization);
}

async function callInternal(target: string, path: string, authorization?: string, body?: unknown) {
  const server = getTestServer(target);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: {
        ...(authorization ? { authorization } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } finally {
    await new Promise((r) => server.close(r));
  }
}

const bearer = async (email: string, opts: Parameters<TestIdp["token"]>[1] = {}) =>
  `Bearer ${await google.token(email, { audience: AUDIENCE, ...opts })}`;

describe("internal routes verify Google-signed OIDC tokens", () => {
  it("serves a call with a token of a configured invoker for the configured audience", async () => {
    const res = await sweep(await bearer(INVOKER));
    expect(res).toEqual({ status: 200, body: { deleted: 0 } });
  });

  it("refuses a call without a token with 401", async () => {
    const res = await sweep();
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "UNAUTHENTICATED", error: expect.stringContaining("OIDC") });
  });

  it("refuses tokens for another audience, expired, unverified, from another issuer or key with 401", async () => {
    const bad = [
      await bearer(INVOKER, { audience: "https://elsewhere.example.test/webhook-sweep" }),
      await bearer(INVOKER, { expiresIn: -60 }),
      await bearer(INVOKER, { claims: { email_verified: false } }),
      await bearer(INVOKER, { issuer: "https://accounts.example.test" }),
      `Bearer ${await google.tokenFromUnknownKey(INVOKER)}`,
      "Bearer not-a-jwt",
    ];
    for (const authorization of bad) {
      const res = await sweep(authorization);
      expect(res.status, authorization).toBe(401);
      expect(res.body["code"]).toBe("UNAUTHENTICATED");
    }
  });

  it("refuses a valid token of an account that is not an invoker with 403", async () => {
    const res = await sweep(await bearer("someone@proj.iam.gserviceaccount.com"));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      code: "FORBIDDEN",
      error: expect.stringContaining("SVC_INTERNAL_INVOKERS"),
    });
  });
});

describe("the autoMerge function (docs/auto-merge.md)", () => {
  const task = { outbox_id: 1, lease: 1 };
  const deliver = (authorization?: string) =>
    callInternal("autoMerge", "/auto-merge-delivery", authorization, task);

  it("refuses a task without a token (401) or with another account's (403) before it runs", async () => {
    expect((await deliver()).status).toBe(401);
    const other = await deliver(await bearer("someone@proj.iam.gserviceaccount.com"));
    expect(other).toMatchObject({ status: 403, body: { code: "FORBIDDEN" } });
  });

  it("runs a task carrying the invoker's token (here webhooks are delivered in-process: 404)", async () => {
    const res = await deliver(await bearer(INVOKER));
    expect(res).toMatchObject({ status: 404, body: { error: expect.stringContaining("in-process") } });
  });
});

describe("the default audience", () => {
  it("is the function's own URL when SVC_INTERNAL_AUDIENCE is unset", async () => {
    const { createInternalVerifier } = await import("../../shared/auth/internal.ts");
    const { webhookDeliveryRoutes } = await import("../../functions/webhook-delivery/routes.ts");
    const verify = createInternalVerifier({ issuer: google.issuer, invokers: [INVOKER], audiences: [] });
    const route = webhookDeliveryRoutes[1];
    if (!route) throw new Error("no sweep route");
    const host = "webhookdelivery-abc.a.run.app";
    const own = await google.token(INVOKER, { audience: `https://${host}/webhook-sweep` });
    await expect(verify({ host, authorization: `Bearer ${own}` }, route)).resolves.toEqual({
      principal: INVOKER,
    });
    const other = await google.token(INVOKER, { audience: "https://other.a.run.app/webhook-sweep" });
    await expect(verify({ host, authorization: `Bearer ${other}` }, route)).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });
  });
});
