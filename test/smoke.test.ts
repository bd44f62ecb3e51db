import { describe, expect, it } from "vitest";
import { api } from "./support/api.ts";
import { startTestApp } from "./support/app.ts";
import { b64 } from "./support/client.ts";
import { expectOk, useFixture } from "./support/world.ts";

const app = useFixture(startTestApp);

describe("smoke", () => {
  it("serves health and a commit round trip", async () => {
    expect((await app.anonymous.get("/healthz")).body).toEqual({ status: "ok" });
    const alice = app.as("alice@example.com");
    expect((await api(alice).post("/orgs", { body: { name: "acme" } })).status).toBe(201);
    expect((await api(alice).post("/repos", { body: { owner: "acme", name: "acme/docs" } })).status).toBe(
      201,
    );
    const c = await api(alice).post("/repos/:repo*/-/commit", {
      params: { repo: "acme/docs" },
      body: {
        branch: "main",
        message: "m",
        files: [{ path: "a.md", content: b64("hi") }],
      },
    });
    expectOk(c, 201);
    expect(c.body).toMatchObject({ sequence: 1, files: [{ path: "a.md" }] });
    const f = await api(alice).get("/repos/:repo*/-/file/:path*", {
      params: { repo: "acme/docs", path: "a.md" },
    });
    expectOk(f, 200);
    expect(Buffer.from(f.body.content, "base64").toString()).toBe("hi");
  });
});
