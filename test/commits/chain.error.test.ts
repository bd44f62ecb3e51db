import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { commit, expectError, repoWithOwner } from "./fixtures.ts";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "a" });
});

const chain = (q: string) => fx.client.get(`${fx.base}/chain${q}`);

describe("a chain request", () => {
  it("without `to` is refused with 400 naming query.to", async () => {
    expect(expectError(await chain("?from=1"), 400, "VALIDATION_FAILED")).toContain("query.to");
  });

  it("with from or to that is not a number is refused with 400", async () => {
    expect(expectError(await chain("?from=abc&to=2"), 400, "VALIDATION_FAILED")).toContain("query.from");
    expect(expectError(await chain("?from=1&to=-2"), 400, "VALIDATION_FAILED")).toContain("query.to");
    expect(expectError(await chain("?from=1&to=2.5"), 400, "VALIDATION_FAILED")).toContain("query.to");
  });

  it("with to before from is refused with 400", async () => {
    expect(expectError(await chain("?from=5&to=2"), 400, "VALIDATION_FAILED")).toContain("query.to");
  });

  it("spanning more than 1,000 commits is refused with 400", async () => {
    expect(expectError(await chain("?from=1&to=1001"), 400, "VALIDATION_FAILED")).toContain("1000");
    expect((await chain("?from=1&to=1000")).status).toBe(200);
  });

  it("of an unknown repo answers 404 REPO_NOT_FOUND", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/chain", {
        params: { repo: `${fx.org}/nope` },
        query: { to: "1" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});
