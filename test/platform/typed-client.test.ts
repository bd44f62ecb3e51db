import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { CommitResponse, FileResponse, TreeResponse } from "../../shared/api/content.ts";
import type { RepoResponse } from "../../shared/api/repos.ts";
import { type Api, api, fillPath, okBody } from "../support/api.ts";
import { ADMIN, startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";

/** The typed client (test/support/api.ts): requests and replies typed by the route table. */
let app: TestApp;
let admin: Api;
beforeAll(async () => {
  app = await startTestApp();
  admin = api(app.as(ADMIN));
});
afterAll(() => app.close());

describe("the typed client", () => {
  it("types a repo's life from org to file by the routes' declared responses", async () => {
    okBody(await admin.post("/orgs", { body: { name: "typed" } }));
    const repo = okBody(await admin.post("/repos", { body: { owner: "typed", name: "typed/docs" } }));
    expectTypeOf(repo).toEqualTypeOf<RepoResponse>();
    expect(repo.name).toBe("typed/docs");

    const params = { repo: repo.name };
    const commit = okBody(
      await admin.post("/repos/:repo*/-/commit", {
        params,
        body: { branch: "main", message: "first", files: [{ path: "a/b.md", content: b64("hi") }] },
      }),
    );
    expect(commit.sequence).toBe(1);

    const tree = okBody(await admin.get("/repos/:repo*/-/tree", { params, query: { branch: "main" } }));
    expectTypeOf(tree).toEqualTypeOf<TreeResponse>();
    expect(tree.entries.map((e) => e.path)).toEqual(["a/b.md"]);

    const file = okBody(
      await admin.get("/repos/:repo*/-/file/:path*", { params: { ...params, path: "a/b.md" } }),
    );
    expectTypeOf(file).toEqualTypeOf<FileResponse>();
    expect(Buffer.from(file.content, "base64").toString()).toBe("hi");

    const read = okBody(
      await admin.get("/repos/:repo*/-/commit/:sequence", { params: { ...params, sequence: "1" } }),
    );
    expectTypeOf(read).toEqualTypeOf<CommitResponse>();
    expect(read.files).toEqual([{ path: "a/b.md", version_id: expect.any(String) }]);

    const gone = await admin.delete("/repos/:repo*", { params });
    expectTypeOf(gone.body).toEqualTypeOf<undefined | import("../support/api.ts").ApiError>();
    expect(gone.status).toBe(204);
  });

  it("types an error reply as the error body", async () => {
    const res = await admin.get("/repos/:repo*", { params: { repo: "typed/none" } });
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.body.code).toBe("REPO_NOT_FOUND");
  });

  it("refuses, at compile time, paths, parameters and bodies the routes do not have", () => {
    // These lines only type-check; none is sent.
    const never = async () => {
      // @ts-expect-error: no such route
      await admin.get("/nope");
      // @ts-expect-error: the repo parameter is missing
      await admin.get("/repos/:repo*/-/tree", { params: {} });
      const noMessage = { branch: "main", files: [] };
      // @ts-expect-error: a commit's body needs a message
      await admin.post("/repos/:repo*/-/commit", { params: { repo: "x/y" }, body: noMessage });
    };
    expect(never).toBeTypeOf("function");
  });

  it("fills a greedy parameter segment by segment, encoding each", () => {
    expect(fillPath("/repos/:repo*/-/file/:path*", { repo: "a/b", path: "x y/z.md" })).toBe(
      "/repos/a/b/-/file/x%20y/z.md",
    );
  });
});
