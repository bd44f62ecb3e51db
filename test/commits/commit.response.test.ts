import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { expectOk } from "../support/world.ts";
import { commit, repoWithOwner } from "./fixtures.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** `POST commit` answers the spec's Commit record, `files` included, as `GET commit/{sequence}` does. */
describe("the answer of a commit", () => {
  it("is the commit record with files (path, version_id) in path byte order, equal to GET commit", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "old.md": "old" });
    const res = await api(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "main",
        message: "several",
        files: [
          { path: "z.md", content: b64("z") },
          { path: "old.md", content: null },
          { path: "\u00e9.md", content: b64("e") },
          { path: "B.md", content: b64("b"), content_type: "text/markdown" },
          { path: "\u{1F600}.md", content: b64("smile") },
          { path: "\uFF21.md", content: b64("fullwidth A") },
        ],
      },
    });
    expectOk(res, 201);
    const got = await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
      params: { repo: fx.repo, sequence: String(res.body.sequence) },
    });
    expect(res.body).toEqual(got.body);
    expect(res.body).toMatchObject({ sequence: 2, branch: "main", message: "several", author: fx.owner });
    // The POST declares only `{sequence}`; it answers the whole commit, equal to the GET's.
    const files = okBody(got).files;
    expect(files.map((f) => f.path)).toEqual([
      "B.md",
      "old.md",
      "z.md",
      "\u00e9.md",
      "\uFF21.md",
      "\u{1F600}.md",
    ]);
    expect(files[1]).toEqual({ path: "old.md", version_id: null });
    const file = okBody(
      await api(fx.client).get("/repos/:repo*/-/file/:path*", { params: { repo: fx.repo, path: "z.md" } }),
    );
    expect(files[2]?.version_id).toBe(file.version_id);
  });
});
