import { describe, expect, it } from "vitest";
import { startTestApp } from "./support/app.ts";
import { b64 } from "./support/client.ts";
import { useFixture } from "./support/world.ts";

const app = useFixture(startTestApp);

describe("smoke", () => {
  it("serves health and a commit round trip", async () => {
    expect((await app.anonymous.get("/healthz")).body).toEqual({ status: "ok" });
    const alice = app.as("alice@example.com");
    expect((await alice.post("/orgs", { name: "acme" })).status).toBe(201);
    expect((await alice.post("/repos", { owner: "acme", name: "acme/docs" })).status).toBe(201);
    const c = await alice.post("/repos/acme/docs/-/commit", {
      branch: "main",
      message: "m",
      files: [{ path: "a.md", content: b64("hi") }],
    });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ sequence: 1, files: [{ path: "a.md" }] });
    const f = await alice.get("/repos/acme/docs/-/file/a.md");
    expect(Buffer.from(f.body.content, "base64").toString()).toBe("hi");
  });
});
