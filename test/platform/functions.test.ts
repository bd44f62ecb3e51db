import http from "node:http";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cloudFunctions } from "../../functions/groups.ts";
import { branchListResponse } from "../../shared/api/repos.ts";
import { errorBody } from "../../shared/http/responses.ts";
import { freshDatabase } from "../support/app.ts";
import { startTestIdp, type TestIdp } from "../support/idp.ts";

/**
 * The cloud shape: each endpoint group is an HTTP function registered with the functions
 * framework, served here by the framework's own server exactly as Cloud Run would run it.
 */
describe("functions framework registration", () => {
  let idp: TestIdp;
  const saved = { ...process.env };
  beforeAll(async () => {
    idp = await startTestIdp();
    Object.assign(process.env, {
      DATABASE_URL: await freshDatabase(),
      OIDC_ISSUER: idp.issuer,
      LOG_LEVEL: "error",
    });
    await import("../../functions/index.ts");
  });
  afterAll(async () => {
    process.env = saved;
    await idp.close();
  });

  const call = async (fn: string, method: string, path: string, body?: unknown, token?: string) => {
    const server = getTestServer(fn);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as { port: number };
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (token) headers["authorization"] = `Bearer ${token}`;
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const parsed: unknown = await res.json().catch(() => null);
      return { status: res.status, body: parsed };
    } finally {
      await new Promise((r) => server.close(r));
    }
  };

  it("registers every group under its name", async () => {
    for (const name of Object.keys(cloudFunctions)) expect(() => getTestServer(name), name).not.toThrow();
    expect((await call("meta", "GET", "/healthz")).body).toEqual({ status: "ok" });
    const token = await idp.token("fn@example.com");
    expect((await call("orgs", "POST", "/orgs", { name: "fn-org" }, token)).status).toBe(201);
    expect((await call("repos", "POST", "/repos", { owner: "fn-org", name: "fn-org/r" }, token)).status).toBe(
      201,
    );
    expect(
      branchListResponse.parse(
        (await call("repos", "GET", "/repos/fn-org/r/-/branches", undefined, token)).body,
      ).branches[0]?.name,
    ).toBe("main");
  });

  it("answers in Quire's error shape, not the framework's, for routes of another group and bad input", async () => {
    const token = await idp.token("fn@example.com");
    expect(errorBody.parse((await call("orgs", "GET", "/repos", undefined, token)).body).code).toBe(
      "NOT_FOUND",
    );
    expect(
      errorBody.parse((await call("orgs", "POST", "/orgs", { name: "no spaces" }, token)).body).code,
    ).toBe("VALIDATION_FAILED");
    expect((await call("orgs", "POST", "/orgs", { name: "x" })).status).toBe(401);
  });

  it("reads large JSON bodies ahead only on the framework's server, not on another server of the process", async () => {
    // Over the 1 MiB at which the framework's server reads a JSON body first (functions/large-bodies.ts).
    const body = JSON.stringify({ text: "x".repeat(1_200_000) });
    const server = http.createServer((req, res) => {
      let size = 0;
      req.on("data", (chunk: Buffer) => (size += chunk.length));
      req.on("end", () => res.end(String(size)));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(Number(await res.text())).toBe(Buffer.byteLength(body));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
