import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../shared/log.ts";
import { startTestApp, type TestApp } from "../support/app.ts";

/** Collects what a logger writes, one string per line. */
function sink() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on("data", (chunk: Buffer) =>
    lines.push(
      ...chunk
        .toString("utf8")
        .split("\n")
        .filter((l) => l !== ""),
    ),
  );
  return { stream, lines };
}

describe("logger", () => {
  it("writes one Cloud Logging JSON object per line with severity and message", async () => {
    const { stream, lines } = sink();
    const log = createLogger({ format: "json", level: "info" }, stream);
    log.warn({ repo: "acme/docs" }, "careful");
    log.debug("hidden");
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      severity: "WARNING",
      message: "careful",
      repo: "acme/docs",
    });
    expect(JSON.parse(lines[0]!).time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("writes readable text lines when LOG_FORMAT=text, filtered by level", async () => {
    const { stream, lines } = sink();
    const log = createLogger({ format: "text", level: "warn" }, stream);
    log.info("not shown");
    log.error({ code: 7 }, "broken");
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ ERROR +broken code=7$/);
  });
});

describe("request log", () => {
  let app: TestApp;
  const { stream, lines } = sink();
  beforeAll(async () => {
    app = await startTestApp({ LOG_LEVEL: "info" }, { logTo: stream });
  });
  afterAll(() => app.close());

  it("logs one line per request with method, path, status, duration, identity and request id", async () => {
    const res = await app
      .as("logger@example.com")
      .raw("GET", "/orgs?x=1", { headers: { "x-request-id": "req-123" } });
    // `x` is an unknown query parameter (400); the line logs the path without the query string.
    expect(res.status).toBe(400);
    expect(res.headers.get("x-request-id")).toBe("req-123");
    await new Promise((r) => setTimeout(r, 20));
    const entries = lines
      .map((l) => JSON.parse(l))
      .filter((e) => e.message === "request" && e.request_id === "req-123");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      severity: "INFO",
      method: "GET",
      path: "/orgs",
      status: 400,
      identity: "logger@example.com",
    });
    expect(typeof entries[0].duration_ms).toBe("number");
  });

  it("logs anonymous refusals with a null identity and a generated request id", async () => {
    const res = await app.anonymous.get("/orgs");
    expect(res.status).toBe(401);
    const id = res.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setTimeout(r, 20));
    const entry = lines.map((l) => JSON.parse(l)).find((e) => e.request_id === id);
    expect(entry).toMatchObject({ status: 401, identity: null, path: "/orgs" });
  });
});
