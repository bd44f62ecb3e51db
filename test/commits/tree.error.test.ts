import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { commit, createBranch, expectError, repoWithOwner } from "./fixtures.ts";

let head: number;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "a" });
  head = await commit(fx, "main", { "b.md": "b" });
  await createBranch(fx, "topic");
});

const tree = (q: string) => fx.client.get(`${fx.base}/tree?${q}`);

describe("reading the tree with a bad query", () => {
  for (const at of ["abc", "-1", "1.5", "", "1e3"]) {
    it(`refuses at='${at}' with 400 naming query.at`, async () => {
      expect(expectError(await tree(`at=${encodeURIComponent(at)}`), 400, "VALIDATION_FAILED")).toContain(
        "query.at",
      );
    });
  }

  it("refuses an at beyond the branch head with 400 SEQUENCE_OUT_OF_RANGE", async () => {
    const msg = expectError(await tree(`at=${head + 1}`), 400, "SEQUENCE_OUT_OF_RANGE");
    expect(msg).toContain("query.at");
    expectError(await tree(`at=${head + 1}&branch=topic`), 400, "SEQUENCE_OUT_OF_RANGE");
    expectError(await tree("at=999999999"), 400, "SEQUENCE_OUT_OF_RANGE");
  });

  for (const limit of ["0", "abc", "-5", "1001", ""]) {
    it(`refuses limit='${limit}' with 400 naming query.limit`, async () => {
      expect(expectError(await tree(`limit=${limit}`), 400, "VALIDATION_FAILED")).toContain("query.limit");
    });
  }

  it("refuses an after cursor that is not a valid path", async () => {
    const msg = expectError(await tree(`after=${encodeURIComponent("a//b")}`), 400, "INVALID_PATH");
    expect(msg).toContain("query.after");
  });

  it("refuses a branch name with forbidden characters", async () => {
    for (const b of ["bad name", "a..b", "-x", "a~b", "x/"])
      expect(expectError(await tree(`branch=${encodeURIComponent(b)}`), 400, "VALIDATION_FAILED")).toContain(
        "query.branch",
      );
  });

  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(await tree("branch=ghost"), 404, "BRANCH_NOT_FOUND");
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/tree", { params: { repo: `${fx.org}/nope` } }),
      404,
      "REPO_NOT_FOUND",
    );
  });

  it("answers 401 without credentials", async () => {
    const res = await api(app.anonymous).get("/repos/:repo*/-/tree", { params: { repo: fx.repo } });
    expectError(res, 401, "UNAUTHENTICATED");
  });
});
