import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AppContext } from "../../shared/context.ts";
import { DomainError, fail } from "../../shared/errors.ts";
import { createAccessTable } from "../../shared/http/access.ts";
import { createDispatcher, type RawRequest } from "../../shared/http/dispatch.ts";
import type { AnyRoute, Reply } from "../../shared/http/route.ts";

/**
 * The dispatcher without a server or database: public routes only, so nothing authenticates or
 * looks up a repo, and a context with just the logger, the access table and the response check.
 */
const ctx = {
  log: { child: () => ({}) },
  access: createAccessTable(),
  config: { SVC_CHECK_RESPONSES: true },
} as unknown as AppContext;

/** A public route whose handler answers with its own name, so a test sees which route ran. */
function publicRoute(method: string, path: string, extra: Partial<AnyRoute> = {}): AnyRoute {
  return {
    method,
    path,
    access: "public",
    summary: `${method} ${path}`,
    responses: { 200: z.object({ route: z.string() }) },
    handler: async (): Promise<Reply> => ({ status: 200, body: { route: `${method} ${path}` } }),
    ...extra,
  } as AnyRoute;
}

/** The dispatcher for `table`; these routes all answer JSON, so the reply is typed as such. */
function dispatcher(table: readonly AnyRoute[]) {
  const dispatch = createDispatcher(ctx, table);
  return async (req: RawRequest) => {
    const out = await dispatch(req);
    return {
      ...out,
      reply: out.reply as { status: number; body?: unknown; headers?: Record<string, string> },
    };
  };
}

function request(method: string, url: string, init: Partial<RawRequest> = {}): RawRequest {
  return { method, url, headers: {}, body: undefined, ...init };
}

const routes = [
  publicRoute("GET", "/repos/:repo*/-/branch/:branch*"),
  publicRoute("DELETE", "/repos/:repo*/-/branch/:branch*"),
  publicRoute("GET", "/repos/:repo*/-/branch/:branch*/status"),
  publicRoute("POST", "/repos/:repo*/-/branch/:branch*/status"),
];

describe("route ranking", () => {
  it("gives a path to the most literal pattern that matches, whatever the table's order", async () => {
    for (const table of [routes, [...routes].reverse()]) {
      const dispatch = dispatcher(table);
      const status = await dispatch(request("GET", "/repos/r/-/branch/x/status"));
      expect(status.reply.body).toEqual({ route: "GET /repos/:repo*/-/branch/:branch*/status" });
      const encoded = await dispatch(request("GET", "/repos/r/-/branch/x%2Fstatus"));
      expect(encoded.reply.body).toEqual({ route: "GET /repos/:repo*/-/branch/:branch*" });
    }
  });

  it("answers 405 with the methods of the winning pattern only", async () => {
    const dispatch = dispatcher(routes);
    const { reply } = await dispatch(request("DELETE", "/repos/r/-/branch/x/status"));
    expect(reply.status).toBe(405);
    expect(reply.body).toMatchObject({ code: "METHOD_NOT_ALLOWED", allow: ["GET", "POST"] });
    expect(reply.headers).toMatchObject({ allow: "GET, POST" });
  });

  it("answers 404 NOT_FOUND for a path no pattern matches", async () => {
    const dispatch = dispatcher(routes);
    const { reply } = await dispatch(request("GET", "/nowhere"));
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("error rendering", () => {
  const failing = (error: () => never) => dispatcher([publicRoute("POST", "/x", { handler: error })]);

  it("renders a DomainError as {code, error} with its details and the request id", async () => {
    const dispatch = failing(() =>
      fail("MERGE_CONFLICT", "2 paths changed on both sides", { conflicts: ["a", "b"] }),
    );
    const out = await dispatch(request("POST", "/x", { headers: { "x-request-id": "req-1" } }));
    expect(out.reply).toEqual({
      status: 409,
      body: { code: "MERGE_CONFLICT", error: "2 paths changed on both sides", conflicts: ["a", "b"] },
      headers: { "x-request-id": "req-1" },
    });
    expect(out.error).toBeUndefined();
  });

  it("turns an unexpected error into a bare 500 and keeps the cause for the log", async () => {
    const cause = new Error("secret detail");
    const out = await failing(() => {
      throw cause;
    })(request("POST", "/x"));
    expect(out.reply.status).toBe(500);
    expect(out.reply.body).toEqual({ code: "INTERNAL", error: "internal error" });
    expect(out.error).toBe(cause);
    expect(out.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("turns a lost database connection into 503 UNAVAILABLE", async () => {
    const out = await failing(() => {
      throw Object.assign(new Error("terminating connection"), { code: "57P01" });
    })(request("POST", "/x"));
    expect(out.reply.status).toBe(503);
    expect(out.reply.body).toMatchObject({ code: "UNAVAILABLE" });
  });

  it("keeps the cause of a 5xx DomainError for the log", async () => {
    const cause = new Error("identity provider timed out");
    const out = await failing(() => {
      throw new DomainError("UNAVAILABLE", "try again", { cause });
    })(request("POST", "/x"));
    expect(out.error).toBe(cause);
  });

  it("ignores a request id that is not a short token", async () => {
    const headers = { "x-request-id": "bad id\nwith newline" };
    const out = await dispatcher(routes)(request("GET", "/nowhere", { headers }));
    expect(out.requestId).not.toContain("bad id");
  });
});

describe("input parsing", () => {
  const withBody = dispatcher([
    publicRoute("POST", "/things", {
      body: z.object({
        name: z.string(),
        path: z.string().refine((p) => !p.includes(".."), { params: { code: "INVALID_PATH" } }),
      }),
    }),
  ]);
  const post = (body: string) => withBody(request("POST", "/things", { body: Buffer.from(body) }));

  it("answers MALFORMED_JSON for a body that is not JSON", async () => {
    const { reply } = await post("{nope");
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: "MALFORMED_JSON" });
  });

  it("answers VALIDATION_FAILED naming the field", async () => {
    const { reply } = await post(JSON.stringify({ path: "a" }));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: "VALIDATION_FAILED" });
    expect((reply.body as { error: string }).error).toMatch(/^body\.name: /);
  });

  it("uses the code a schema tags its issue with", async () => {
    const { reply } = await post(JSON.stringify({ name: "n", path: "../etc" }));
    expect(reply.body).toMatchObject({ code: "INVALID_PATH" });
  });
});
