import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { commit, expectError, repoWithOwner } from "./fixtures.ts";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "doc.md": "v1" });
});

const history = (path: string, q = "") => fx.client.get(`${fx.base}/file/${path}/history${q}`);

describe("reading a file's history with bad input", () => {
  for (const limit of ["0", "abc", "-1", "1001"]) {
    it(`refuses limit='${limit}' with 400 naming query.limit`, async () => {
      expect(expectError(await history("doc.md", `?limit=${limit}`), 400, "VALIDATION_FAILED")).toContain(
        "query.limit",
      );
    });
  }

  for (const after of ["abc", "-1", "1.5"]) {
    it(`refuses after='${after}' with 400 naming query.after`, async () => {
      expect(expectError(await history("doc.md", `?after=${after}`), 400, "VALIDATION_FAILED")).toContain(
        "query.after",
      );
    });
  }

  it("refuses an invalid path with 400 INVALID_PATH", async () => {
    expectError(await history("a%2F..%2Fb.md"), 400, "INVALID_PATH");
    expectError(await history("a%5Cb.md"), 400, "INVALID_PATH");
  });

  it("answers 404 BRANCH_NOT_FOUND for an unknown branch and 400 for a forbidden name", async () => {
    expectError(await history("doc.md", "?branch=ghost"), 404, "BRANCH_NOT_FOUND");
    expect(
      expectError(await history("doc.md", `?branch=${encodeURIComponent("a~b")}`), 400, "VALIDATION_FAILED"),
    ).toContain("query.branch");
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/file/:path*/history", {
        params: { repo: `${fx.org}/nope`, path: "doc.md" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});
