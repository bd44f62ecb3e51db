import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../functions/groups.ts";
import { openApiPath } from "../../shared/http/openapi.ts";
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
});
