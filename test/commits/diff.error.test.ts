import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { commit, createBranch, expectError, repoWithOwner } from "./fixtures.ts";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "a" });
  await createBranch(fx, "topic");
});

const diff = (q: string) => fx.client.get(`${fx.base}/diff${q}`);

describe("a diff request", () => {
  it("of main is refused with 400 naming query.branch", async () => {
    expect(expectError(await diff("?branch=main"), 400, "VALIDATION_FAILED")).toContain("query.branch");
  });

  it("without a branch is refused with 400 naming query.branch", async () => {
    expect(expectError(await diff(""), 400, "VALIDATION_FAILED")).toContain("query.branch");
    expect(expectError(await diff("?branch="), 400, "VALIDATION_FAILED")).toContain("query.branch");
  });

  it("with a forbidden branch name is refused with 400", async () => {
    for (const b of ["bad name", "a..b", "-x", "a~b", "x/"])
      expect(expectError(await diff(`?branch=${encodeURIComponent(b)}`), 400, "VALIDATION_FAILED")).toContain(
        "query.branch",
      );
  });

  it("of an unknown branch answers 404 BRANCH_NOT_FOUND", async () => {
    expectError(await diff("?branch=ghost"), 404, "BRANCH_NOT_FOUND");
  });

  it("of an unknown repo answers 404 REPO_NOT_FOUND", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/diff", {
        params: { repo: `${fx.org}/nope` },
        query: { branch: "topic" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});
