import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ciCronRoutes, ciReaperRoutes } from "../../functions/ci-timers/routes.ts";
import { allRoutes } from "../../functions/groups.ts";
import { webhookDeliveryRoutes } from "../../functions/webhook-delivery/routes.ts";
import { openApiDocument, openApiPath } from "../../shared/http/openapi.ts";
import { startTestApp, type TestApp } from "../support/app.ts";

/** The parts of an OpenAPI 3.1 document these tests read; parsing checks the document has them. */
const Schema = z.looseObject({ required: z.array(z.string()).optional() });
const Content = z.record(z.string(), z.looseObject({ schema: Schema }));
const Operation = z.looseObject({
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  parameters: z.array(z.looseObject({ name: z.string() })).optional(),
  requestBody: z.looseObject({ content: Content }).optional(),
  responses: z.record(
    z.string(),
    z.looseObject({ content: Content.optional(), headers: z.record(z.string(), z.unknown()).optional() }),
  ),
  "x-quire-access": z.string().optional(),
});
const OpenApiDoc = z.looseObject({
  openapi: z.string(),
  paths: z.record(z.string(), z.record(z.string(), Operation)),
  components: z.looseObject({
    securitySchemes: z.record(z.string(), z.unknown()),
    schemas: z.record(z.string(), Schema),
  }),
});

async function fetchDoc(app: TestApp) {
  const res = await app.anonymous.get("/openapi.json");
  expect(res.status).toBe(200);
  return { raw: res.body, doc: OpenApiDoc.parse(res.body) };
}

/** The operation at `path` and `method`, failing the test when the document lacks it. */
function op(doc: z.infer<typeof OpenApiDoc>, path: string, method: string) {
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`no ${method} ${path} in the document`);
  return found;
}

describe("GET /openapi.json", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("describes every route of every group, publicly", async () => {
    const { doc } = await fetchDoc(app);
    expect(doc.openapi).toBe("3.1.0");
    for (const r of allRoutes)
      expect(doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
  });

  it("is the document committed as docs/openapi.json", async () => {
    const { raw } = await fetchDoc(app);
    const committed = JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"));
    expect(raw, "docs/openapi.json is stale: run `npm run snapshots`").toEqual(committed);
  });

  it("carries each route's request schema and query parameters", async () => {
    const { doc } = await fetchDoc(app);
    const commit = op(doc, "/repos/{repo}/-/commit", "post");
    expect(commit.requestBody?.content["application/json"]?.schema.required).toEqual(
      expect.arrayContaining(["branch", "message", "files"]),
    );
    expect(commit.security).toEqual([{ bearer: [] }]);
    const tree = op(doc, "/repos/{repo}/-/tree", "get");
    expect(tree.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(["repo", "branch", "at", "limit", "after"]),
    );
    expect(op(doc, "/healthz", "get").security).toBeUndefined();
  });

  it("tells each route's security from its access kind", async () => {
    const { doc } = await fetchDoc(app);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(
      ["bearer", "internalOidc", "requestToken", "signedUrl", "workerToken"].sort(),
    );
    expect(op(doc, "/repos/{repo}/-/archive", "get").security).toEqual([{ bearer: [] }, { signedUrl: [] }]);
    expect(op(doc, "/run/{id}/logs/{check}", "get").security).toEqual([{ bearer: [] }, { signedUrl: [] }]);
    expect(op(doc, "/claim", "post").security).toEqual([{ workerToken: [] }]);
    expect(op(doc, "/ci/token", "post").security).toEqual([{ requestToken: [] }]);
    expect(op(doc, "/repos/{repo}/-/archive", "get")["x-quire-access"]).toBe("repo:reader-or-presigned");
  });

  it("lists each route's declared success and its error statuses with the error body", async () => {
    const { doc } = await fetchDoc(app);
    for (const r of allRoutes) {
      const responses = op(doc, openApiPath(r.path), r.method.toLowerCase()).responses;
      expect(responses["default"], `${r.method} ${r.path}`).toBeUndefined();
      expect(
        Object.keys(responses).some((s) => s < "400"),
        `${r.method} ${r.path}`,
      ).toBe(true);
    }
    const commit = op(doc, "/repos/{repo}/-/commit", "post").responses;
    expect(commit["201"]?.content?.["application/json"]?.schema.required).toContain("sequence");
    expect(Object.keys(commit).sort()).toEqual(["201", "400", "401", "403", "404", "409", "412"]);
    // If-Match on a commit, and the ETag that GET branch gives for it (docs/api.md).
    expect(op(doc, "/repos/{repo}/-/commit", "post").parameters).toContainEqual(
      expect.objectContaining({ name: "If-Match", in: "header" }),
    );
    const branch = op(doc, "/repos/{repo}/-/branch/{branch}", "get").responses;
    expect(branch["200"]?.headers?.["ETag"]).toBeDefined();
    expect(commit["404"]?.content?.["application/json"]?.schema).toEqual({
      $ref: "#/components/schemas/Error",
    });
    expect(doc.components.schemas["Error"]?.required).toEqual(["code", "error"]);
    expect(Object.keys(op(doc, "/repos/{repo}/-/archive", "get").responses["200"]?.content ?? {})).toEqual([
      "application/gzip",
    ]);
    expect(op(doc, "/run/{id}/logs/{check}", "get").responses["302"]?.headers?.["location"]).toBeDefined();
    expect(Object.keys(op(doc, "/healthz", "get").responses)).toEqual(["200"]);
  });

  it("describes the internal routes (Cloud Tasks, Cloud Scheduler) with the internal OIDC scheme", () => {
    const doc = openApiDocument([...webhookDeliveryRoutes, ...ciCronRoutes, ...ciReaperRoutes]) as {
      paths: Record<string, Record<string, { security?: unknown }>>;
    };
    for (const path of ["/webhook-delivery", "/webhook-sweep", "/ci-cron", "/ci-reap"])
      expect(doc.paths[path]?.["post"]?.security, path).toEqual([{ internalOidc: [] }]);
  });
});
