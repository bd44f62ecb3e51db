import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDispatcher } from "../../shared/http/dispatch.ts";
import { bytes, redirect, replyDrift } from "../../shared/http/responses.ts";
import { type AnyRoute, noContent, ok, route } from "../../shared/http/route.ts";
import { startTestApp, type TestApp } from "../support/app.ts";

/**
 * Every route declares what it answers on success, and the tests run with SVC_CHECK_RESPONSES,
 * which turns a reply that drifts from its declaration into a 500 with the zod issues in the log.
 */
const declared = route({
  method: "GET",
  path: "/probe",
  access: "public",
  summary: "A probe",
  query: z.object({ reply: z.string() }),
  responses: { 200: z.object({ n: z.int(), at: z.iso.datetime() }), 204: null },
  handler: async ({ query }) => {
    if (query.reply === "good") return ok({ n: 1, at: new Date(0) });
    if (query.reply === "none") return noContent();
    if (query.reply === "created") return { status: 201, body: { n: 1 } };
    return ok({ n: "one", at: new Date(0) });
  },
});

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const get = (routes: AnyRoute[], reply: string, check = true) =>
  createDispatcher(
    { ...app.server.ctx, config: { ...app.server.ctx.config, SVC_CHECK_RESPONSES: check } },
    routes,
  )({
    method: "GET",
    url: `/probe?reply=${reply}`,
    headers: {},
    body: undefined,
  });

describe("declared responses", () => {
  it("passes a reply that matches its declaration, checked as serialized JSON", async () => {
    expect((await get([declared], "good")).reply.status).toBe(200);
    expect((await get([declared], "none")).reply.status).toBe(204);
  });

  it("turns a body that drifts from its schema into a 500 whose logged cause names the field", async () => {
    const outcome = await get([declared], "bad");
    expect(outcome.reply.status).toBe(500);
    expect(String(outcome.error)).toContain("n");
    expect(String(outcome.error)).toContain("GET /probe answered what it does not declare");
  });

  it("turns an undeclared status into a 500", async () => {
    const outcome = await get([declared], "created");
    expect(outcome.reply.status).toBe(500);
    expect(String(outcome.error)).toContain("status 201 is not one the route declares");
  });

  it("does not check without SVC_CHECK_RESPONSES (production)", async () => {
    expect((await get([declared], "bad", false)).reply.status).toBe(200);
  });

  it("checks the content type of bytes, the location of a redirect, and no body for null", () => {
    const r = (responses: AnyRoute["responses"]) => ({ ...declared, responses }) as AnyRoute;
    expect(replyDrift(r({ 200: bytes("text/plain") }), { status: 200, body: "x" })).toContain("content type");
    expect(
      replyDrift(r({ 200: bytes("text/plain") }), {
        status: 200,
        body: "x",
        headers: { "content-type": "text/plain; charset=utf-8" },
      }),
    ).toBeNull();
    expect(replyDrift(r({ 302: redirect }), { status: 302, headers: {} })).toContain("location");
    expect(replyDrift(r({ 204: null }), { status: 204, body: {} })).toContain("a body");
    expect(replyDrift(r({ 204: null }), { status: 404, body: {} })).toBeNull();
  });
});
