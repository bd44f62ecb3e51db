import { describe, expect, it } from "vitest";
import { z } from "zod";
import { JsonBytes, jsonBytes } from "../../shared/http/json-bytes.ts";
import { replyDrift } from "../../shared/http/responses.ts";
import type { AnyRoute } from "../../shared/http/route.ts";

/** A reply body serialized once (a cached tree page, shared/commits/reads.ts). */
describe("a JSON body sent as its bytes", () => {
  const page = {
    entries: [{ path: "a/é.md", version_id: "ab", content_type: "text/markdown", binary: false }],
  };

  it("holds the UTF-8 bytes of the value's JSON, and serializes back to the same text", () => {
    const body = jsonBytes(page);
    expect(body).toBeInstanceOf(JsonBytes);
    expect(body.bytes.equals(Buffer.from(JSON.stringify(page), "utf8"))).toBe(true);
    expect(JSON.stringify(body)).toBe(JSON.stringify(page));
    expect(JSON.stringify({ wrapped: body })).toBe(JSON.stringify({ wrapped: page }));
  });

  it("is checked against the route's declared response as the value it carries", () => {
    const route = {
      method: "GET",
      path: "/p",
      access: "public",
      summary: "p",
      responses: { 200: z.strictObject({ entries: z.array(z.object({ path: z.string() })) }) },
      handler: async () => ({ status: 200 }),
    } as unknown as AnyRoute;
    expect(replyDrift(route, { status: 200, body: jsonBytes(page) })).toBeNull();
    expect(replyDrift(route, { status: 200, body: jsonBytes({ entries: [{ name: "x" }] }) })).not.toBeNull();
  });
});
