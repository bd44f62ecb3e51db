import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ciCronRoutes, ciReaperRoutes } from "../../functions/ci-timers/routes.ts";
import { allRoutes } from "../../functions/groups.ts";
import { webhookDeliveryRoutes } from "../../functions/webhook-delivery/routes.ts";
import { openApiDocument, openApiPath } from "../../shared/http/openapi.ts";
import { startTestApp, type TestApp } from "../support/app.ts";

describe("GET /openapi.json", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it("describes every route of every group, publicly", async () => {
    const res = await app.anonymous.get("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    for (const r of allRoutes)
      expect(
        res.body.paths[openApiPath(r.path)]?.[r.method.toLowerCase()],
        `${r.method} ${r.path}`,
      ).toBeDefined();
  });

  it("is the document committed as docs/openapi.json", async () => {
    const { body } = await app.anonymous.get("/openapi.json");
    const committed = JSON.parse(readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"));
    expect(body, "docs/openapi.json is stale: run `npm run snapshots`").toEqual(committed);
  });

  it("carries each route's request schema and query parameters", async () => {
    const { body } = await app.anonymous.get("/openapi.json");
    const commit = body.paths["/repos/{repo}/-/commit"].post;
    expect(commit.requestBody.content["application/json"].schema.required).toEqual(
      expect.arrayContaining(["branch", "message", "files"]),
    );
    expect(commit.security).toEqual([{ bearer: [] }]);
    const tree = body.paths["/repos/{repo}/-/tree"].get;
    expect(tree.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["repo", "branch", "at", "limit", "after"]),
    );
    expect(body.paths["/healthz"].get.security).toBeUndefined();
  });

  it("tells each route's security from its access kind", async () => {
    const { body } = await app.anonymous.get("/openapi.json");
    expect(Object.keys(body.components.securitySchemes).sort()).toEqual(
      ["bearer", "internalOidc", "requestToken", "signedUrl", "workerToken"].sort(),
    );
    expect(body.paths["/repos/{repo}/-/archive"].get.security).toEqual([{ bearer: [] }, { signedUrl: [] }]);
    expect(body.paths["/run/{id}/logs/{check}"].get.security).toEqual([{ bearer: [] }, { signedUrl: [] }]);
    expect(body.paths["/claim"].post.security).toEqual([{ workerToken: [] }]);
    expect(body.paths["/ci/token"].post.security).toEqual([{ requestToken: [] }]);
    expect(body.paths["/repos/{repo}/-/archive"].get["x-quire-access"]).toBe("repo:reader-or-presigned");
  });

  it("lists each route's declared success and its error statuses with the error body", async () => {
    const { body } = await app.anonymous.get("/openapi.json");
    for (const r of allRoutes) {
      const responses = body.paths[openApiPath(r.path)][r.method.toLowerCase()].responses;
      expect(responses.default, `${r.method} ${r.path}`).toBeUndefined();
      expect(
        Object.keys(responses).some((s) => s < "400"),
        `${r.method} ${r.path}`,
      ).toBe(true);
    }
    const commit = body.paths["/repos/{repo}/-/commit"].post.responses;
    expect(commit["201"].content["application/json"].schema.required).toContain("sequence");
    expect(Object.keys(commit).sort()).toEqual(["201", "400", "401", "403", "404", "409"]);
    expect(commit["404"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    expect(body.components.schemas.Error.required).toEqual(["code", "error"]);
    expect(Object.keys(body.paths["/repos/{repo}/-/archive"].get.responses["200"].content)).toEqual([
      "application/gzip",
    ]);
    expect(body.paths["/run/{id}/logs/{check}"].get.responses["302"].headers.location).toBeDefined();
    expect(Object.keys(body.paths["/healthz"].get.responses)).toEqual(["200"]);
  });

  it("describes the internal routes (Cloud Tasks, Cloud Scheduler) with the internal OIDC scheme", () => {
    const doc = openApiDocument([...webhookDeliveryRoutes, ...ciCronRoutes, ...ciReaperRoutes]) as {
      paths: Record<string, Record<string, { security?: unknown }>>;
    };
    for (const path of ["/webhook-delivery", "/webhook-sweep", "/ci-cron", "/ci-reap"])
      expect(doc.paths[path]?.["post"]?.security, path).toEqual([{ internalOidc: [] }]);
  });
});
