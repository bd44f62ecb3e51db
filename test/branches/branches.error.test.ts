import { beforeAll, describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { api, okBody, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { commit, createBranch, expectError, repoWithOwner, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "hello" });
});

describe("creating a branch with a forbidden name", () => {
  for (const [label, name] of [
    ["a space", "bad name"],
    ["'..'", "a..b"],
    ["a leading '-'", "-x"],
    ["'~'", "a~b"],
    ["a trailing '/'", "x/"],
    ["a leading '/'", "/x"],
    ["an empty segment", "a//b"],
    ["nothing", ""],
  ] as const) {
    it(`refuses ${label} with 400 naming body.name, and writes nothing`, async () => {
      const before = await snapshot(app, fx);
      const msg = expectError(
        await api(fx.client).post("/repos/:repo*/-/branch", { params: { repo: fx.repo }, body: { name } }),
        400,
        "VALIDATION_FAILED",
      );
      expect(msg).toContain("body.name");
      expect(await snapshot(app, fx)).toEqual(before);
    });
  }

  it("refuses a forbidden name in a branch path", async () => {
    expectError(await fx.client.get(`${fx.base}/branch/bad%20name`), 400, "VALIDATION_FAILED");
    expectError(
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "a~b" },
      }),
      400,
      "VALIDATION_FAILED",
    );
    expectError(
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "a..b" },
      }),
      400,
      "VALIDATION_FAILED",
    );
    expectError(
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "-x" },
      }),
      400,
      "VALIDATION_FAILED",
    );
  });
});

describe("creating a branch", () => {
  it("refuses a name that is taken (409 BRANCH_EXISTS) and writes nothing", async () => {
    await createBranch(fx, "taken");
    const before = await snapshot(app, fx);
    expectError(
      await api(fx.client).post("/repos/:repo*/-/branch", {
        params: { repo: fx.repo },
        body: { name: "taken" },
      }),
      409,
      "BRANCH_EXISTS",
    );
    expectError(
      await api(fx.client).post("/repos/:repo*/-/branch", {
        params: { repo: fx.repo },
        body: { name: "main" },
      }),
      409,
      "BRANCH_EXISTS",
    );
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a draft flag that is not a boolean", async () => {
    const msg = expectError(
      await unchecked(fx.client).post("/repos/:repo*/-/branch", {
        params: { repo: fx.repo },
        body: { name: "typed", draft: "yes" },
      }),
      400,
      "VALIDATION_FAILED",
    );
    expect(msg).toContain("body.draft");
  });

  it("refuses malformed JSON with 400 MALFORMED_JSON", async () => {
    const res = await fx.client.raw("POST", `${fx.base}/branch`, {
      body: '{"name": "x"',
      headers: { "content-type": "application/json" },
    });
    expectError(res, 400, "MALFORMED_JSON");
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo", async () => {
    expectError(
      await api(fx.client).post("/repos/:repo*/-/branch", {
        params: { repo: `${fx.org}/nope` },
        body: { name: "x" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});

describe("reading branches", () => {
  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "ghost" },
      }),
      404,
      "BRANCH_NOT_FOUND",
    );
    expectError(
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "feature/ghost" },
      }),
      404,
      "BRANCH_NOT_FOUND",
    );
  });

  it("refuses an unknown status or a non-boolean draft filter with 400", async () => {
    expect(
      expectError(
        await unchecked(fx.client).get("/repos/:repo*/-/branches", {
          params: { repo: fx.repo },
          query: { status: "open" },
        }),
        400,
        "VALIDATION_FAILED",
      ),
    ).toContain("query.status");
    expect(
      expectError(
        await unchecked(fx.client).get("/repos/:repo*/-/branches", {
          params: { repo: fx.repo },
          query: { draft: "yes" },
        }),
        400,
        "VALIDATION_FAILED",
      ),
    ).toContain("query.draft");
    expect(
      expectError(
        await unchecked(fx.client).get("/repos/:repo*/-/branches", {
          params: { repo: fx.repo },
          query: { include_draft: "1" },
        }),
        400,
        "VALIDATION_FAILED",
      ),
    ).toContain("query.include_draft");
  });

  it("answers 404 REPO_NOT_FOUND for the branches of an unknown repo", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/branches", { params: { repo: `${fx.org}/nope` } }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});

describe("patching a branch", () => {
  it("refuses {draft:true} with 400 and leaves the branch ready", async () => {
    await createBranch(fx, "stay-ready");
    const msg = expectError(
      await api(fx.client).patch("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "stay-ready" },
        body: { draft: true },
      }),
      400,
      "VALIDATION_FAILED",
    );
    expect(msg).toContain("draft");
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "stay-ready" },
        }),
      ).draft,
    ).toBe(false);
  });

  it("refuses a missing or non-boolean draft with 400 naming body.draft", async () => {
    await createBranch(fx, "patch-typed", true);
    for (const body of [{}, { draft: "false" }, { draft: null }]) {
      const msg = expectError(
        await unchecked(fx.client).patch("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "patch-typed" },
          body,
        }),
        400,
        "VALIDATION_FAILED",
      );
      expect(msg).toContain("body.draft");
    }
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "patch-typed" },
        }),
      ).draft,
    ).toBe(true);
  });

  it("answers 404 for an unknown branch and 409 for an abandoned one", async () => {
    expectError(
      await api(fx.client).patch("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "ghost" },
        body: { draft: false },
      }),
      404,
      "BRANCH_NOT_FOUND",
    );
    await createBranch(fx, "patch-gone", true);
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "patch-gone" },
        })
      ).status,
    ).toBe(204);
    expectError(
      await api(fx.client).patch("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "patch-gone" },
        body: { draft: false },
      }),
      409,
      "BRANCH_NOT_ACTIVE",
    );
  });
});

describe("deleting a branch", () => {
  it("refuses main with 409 MAIN_BRANCH_PROTECTED and writes nothing", async () => {
    const before = await snapshot(app, fx);
    expectError(
      await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "main" },
      }),
      409,
      "MAIN_BRANCH_PROTECTED",
    );
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "main" },
        }),
      ).status,
    ).toBe("active");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a second delete with 409 BRANCH_NOT_ACTIVE and records no second event", async () => {
    await createBranch(fx, "twice");
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "twice" },
        })
      ).status,
    ).toBe(204);
    const before = await snapshot(app, fx);
    expectError(
      await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "twice" },
      }),
      409,
      "BRANCH_NOT_ACTIVE",
    );
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a merged branch with 409 BRANCH_NOT_ACTIVE", async () => {
    await createBranch(fx, "merged-one");
    await app.sql("UPDATE branches SET status = 'merged' WHERE repo_id = $1 AND name = 'merged-one'", [
      fx.repoId,
    ]);
    expectError(
      await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "merged-one" },
      }),
      409,
      "BRANCH_NOT_ACTIVE",
    );
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "merged-one" },
        }),
      ).status,
    ).toBe("merged");
  });

  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(
      await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "ghost" },
      }),
      404,
      "BRANCH_NOT_FOUND",
    );
  });
});

describe("committing to an abandoned branch", () => {
  it("is refused with 409 BRANCH_NOT_ACTIVE and writes nothing", async () => {
    await createBranch(fx, "closed");
    await commit(fx, "closed", { "c.md": "before" });
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "closed" },
        })
      ).status,
    ).toBe(204);
    const before = await snapshot(app, fx);
    const res = await api(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "closed",
        message: "too late",
        files: [{ path: "c.md", content: b64("after") }],
      },
    });
    expectError(res, 409, "BRANCH_NOT_ACTIVE");
    expect(await snapshot(app, fx)).toEqual(before);
  });
});
