import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commit, expectError, repoWithOwner } from "../commits/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { release, releaseState } from "./fixtures.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** The spec's release notes field is `notes`; the origin clients send it as `body` (docs/api.md). */
describe("a release's body, the origin clients' name for notes", () => {
  it("is kept as the release's notes", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { "a.md": "one" });
    const r = await release(fx, { name: "v1", sequence: seq, body: "What changed." });
    expect(r).toMatchObject({ name: "v1", notes: "What changed." });
    expect(r).not.toHaveProperty("body");
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/releases/:release_name", {
          params: { repo: fx.repo, release_name: "v1" },
        }),
      ).notes,
    ).toBe("What changed.");
  });

  it("is refused next to notes, even an equal one, naming body, and nothing is created", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { "a.md": "one" });
    const before = await releaseState(app, fx);
    for (const body of ["Other.", "Same."]) {
      const res = await api(fx.client).post("/repos/:repo*/-/releases", {
        params: { repo: fx.repo },
        body: {
          name: "v1",
          sequence: seq,
          notes: "Same.",
          body,
        },
      });
      expect(expectError(res, 400, "VALIDATION_FAILED")).toBe(
        "body.body: is another name for notes; send notes or body, not both",
      );
    }
    expect(await releaseState(app, fx)).toEqual(before);
  });

  it("has the limits of notes", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { "a.md": "one" });
    const res = await api(fx.client).post("/repos/:repo*/-/releases", {
      params: { repo: fx.repo },
      body: {
        name: "v1",
        sequence: seq,
        body: "x".repeat(65_537),
      },
    });
    expect(expectError(res, 400, "VALIDATION_FAILED")).toMatch(/^body\.body: must be at most 65536/);
  });
});
