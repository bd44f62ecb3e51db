import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ciCronRoutes } from "../../functions/ci-timers/routes.ts";
import { webhookDeliveryRoutes } from "../../functions/webhook-delivery/routes.ts";
import { fail } from "../../shared/errors.ts";
import { createAccessTable, type InternalVerifier } from "../../shared/http/access.ts";
import { createDispatcher } from "../../shared/http/dispatch.ts";
import { type AnyRoute, ok, route } from "../../shared/http/route.ts";
import { startTestApp, type TestApp } from "../support/app.ts";

/**
 * The `internal` access kind (Cloud Tasks and Cloud Scheduler routes): the context's verifier
 * decides, and what it proves reaches the handler as `call.internal`.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const sweep = (routes: AnyRoute[], verifyInternal?: InternalVerifier) =>
  createDispatcher(
    { ...app.server.ctx, access: createAccessTable(verifyInternal ? { verifyInternal } : {}) },
    routes,
  )({
    method: "POST",
    url: routes[0]?.path ?? "/",
    headers: { authorization: "Bearer google-signed" },
    body: undefined,
  });

describe("internal access", () => {
  it("marks the Cloud Tasks and Cloud Scheduler routes internal", () => {
    for (const r of [...webhookDeliveryRoutes, ...ciCronRoutes]) expect(r.access, r.path).toBe("internal");
  });

  it("trusts the network by default, as before", async () => {
    const sweepRoute = webhookDeliveryRoutes.filter((r) => r.path === "/webhook-sweep");
    expect((await sweep(sweepRoute)).reply.status).toBe(200);
  });

  it("answers what the context's verifier refuses with its error, before the handler runs", async () => {
    const sweepRoute = webhookDeliveryRoutes.filter((r) => r.path === "/webhook-sweep");
    const refuse: InternalVerifier = async () => fail("UNAUTHENTICATED", "not a Google-signed token");
    const { reply } = await sweep(sweepRoute, refuse);
    expect(reply.status).toBe(401);
  });

  it("hands the handler the caller the verifier proved", async () => {
    const echo = route({
      method: "POST",
      path: "/echo",
      access: "internal",
      summary: "echo",
      responses: {},
      handler: async ({ internal }) => ok(internal),
    });
    const verify: InternalVerifier = async (headers) => ({ principal: String(headers.authorization) });
    const { reply } = await createDispatcher(
      {
        ...app.server.ctx,
        config: { ...app.server.ctx.config, SVC_CHECK_RESPONSES: false },
        access: createAccessTable({ verifyInternal: verify }),
      },
      [echo],
    )({ method: "POST", url: "/echo", headers: { authorization: "Bearer x" }, body: undefined });
    expect(reply).toMatchObject({ status: 200, body: { principal: "Bearer x" } });
  });
});
