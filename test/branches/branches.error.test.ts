import { beforeAll, describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
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
      const msg = expectError(await fx.client.post(`${fx.base}/branch`, { name }), 400, "VALIDATION_FAILED");
      expect(msg).toContain("body.name");
      expect(await snapshot(app, fx)).toEqual(before);
    });
  }

  it("refuses a forbidden name in a branch path", async () => {
    expectError(await fx.client.get(`${fx.base}/branch/bad%20name`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/branch/a~b`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/branch/a..b`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/branch/-x`), 400, "VALIDATION_FAILED");
  });
});

describe("creating a branch", () => {
  it("refuses a name that is taken (409 BRANCH_EXISTS) and writes nothing", async () => {
    await createBranch(fx, "taken");
    const before = await snapshot(app, fx);
    expectError(await fx.client.post(`${fx.base}/branch`, { name: "taken" }), 409, "BRANCH_EXISTS");
    expectError(await fx.client.post(`${fx.base}/branch`, { name: "main" }), 409, "BRANCH_EXISTS");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a draft flag that is not a boolean", async () => {
    const msg = expectError(
      await fx.client.post(`${fx.base}/branch`, { name: "typed", draft: "yes" }),
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
    expectError(await fx.client.post(`/repos/${fx.org}/nope/-/branch`, { name: "x" }), 404, "REPO_NOT_FOUND");
  });
});

describe("reading branches", () => {
  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(await fx.client.get(`${fx.base}/branch/ghost`), 404, "BRANCH_NOT_FOUND");
    expectError(await fx.client.get(`${fx.base}/branch/feature/ghost`), 404, "BRANCH_NOT_FOUND");
  });

  it("refuses an unknown status or a non-boolean draft filter with 400", async () => {
    expect(
      expectError(await fx.client.get(`${fx.base}/branches?status=open`), 400, "VALIDATION_FAILED"),
    ).toContain("query.status");
    expect(
      expectError(await fx.client.get(`${fx.base}/branches?draft=yes`), 400, "VALIDATION_FAILED"),
    ).toContain("query.draft");
    expect(
      expectError(await fx.client.get(`${fx.base}/branches?include_draft=1`), 400, "VALIDATION_FAILED"),
    ).toContain("query.include_draft");
  });

  it("answers 404 REPO_NOT_FOUND for the branches of an unknown repo", async () => {
    expectError(await fx.client.get(`/repos/${fx.org}/nope/-/branches`), 404, "REPO_NOT_FOUND");
  });
});

describe("patching a branch", () => {
  it("refuses {draft:true} with 400 and leaves the branch ready", async () => {
    await createBranch(fx, "stay-ready");
    const msg = expectError(
      await fx.client.patch(`${fx.base}/branch/stay-ready`, { draft: true }),
      400,
      "VALIDATION_FAILED",
    );
    expect(msg).toContain("draft");
    expect((await fx.client.get(`${fx.base}/branch/stay-ready`)).body.draft).toBe(false);
  });

  it("refuses a missing or non-boolean draft with 400 naming body.draft", async () => {
    await createBranch(fx, "patch-typed", true);
    for (const body of [{}, { draft: "false" }, { draft: null }]) {
      const msg = expectError(
        await fx.client.patch(`${fx.base}/branch/patch-typed`, body),
        400,
        "VALIDATION_FAILED",
      );
      expect(msg).toContain("body.draft");
    }
    expect((await fx.client.get(`${fx.base}/branch/patch-typed`)).body.draft).toBe(true);
  });

  it("answers 404 for an unknown branch and 409 for an abandoned one", async () => {
    expectError(await fx.client.patch(`${fx.base}/branch/ghost`, { draft: false }), 404, "BRANCH_NOT_FOUND");
    await createBranch(fx, "patch-gone", true);
    expect((await fx.client.delete(`${fx.base}/branch/patch-gone`)).status).toBe(204);
    expectError(
      await fx.client.patch(`${fx.base}/branch/patch-gone`, { draft: false }),
      409,
      "BRANCH_NOT_ACTIVE",
    );
  });
});

describe("deleting a branch", () => {
  it("refuses main with 409 MAIN_BRANCH_PROTECTED and writes nothing", async () => {
    const before = await snapshot(app, fx);
    expectError(await fx.client.delete(`${fx.base}/branch/main`), 409, "MAIN_BRANCH_PROTECTED");
    expect((await fx.client.get(`${fx.base}/branch/main`)).body.status).toBe("active");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a second delete with 409 BRANCH_NOT_ACTIVE and records no second event", async () => {
    await createBranch(fx, "twice");
    expect((await fx.client.delete(`${fx.base}/branch/twice`)).status).toBe(204);
    const before = await snapshot(app, fx);
    expectError(await fx.client.delete(`${fx.base}/branch/twice`), 409, "BRANCH_NOT_ACTIVE");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  it("refuses a merged branch with 409 BRANCH_NOT_ACTIVE", async () => {
    await createBranch(fx, "merged-one");
    await app.sql("UPDATE branches SET status = 'merged' WHERE repo_id = $1 AND name = 'merged-one'", [
      fx.repoId,
    ]);
    expectError(await fx.client.delete(`${fx.base}/branch/merged-one`), 409, "BRANCH_NOT_ACTIVE");
    expect((await fx.client.get(`${fx.base}/branch/merged-one`)).body.status).toBe("merged");
  });

  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(await fx.client.delete(`${fx.base}/branch/ghost`), 404, "BRANCH_NOT_FOUND");
  });
});

describe("committing to an abandoned branch", () => {
  it("is refused with 409 BRANCH_NOT_ACTIVE and writes nothing", async () => {
    await createBranch(fx, "closed");
    await commit(fx, "closed", { "c.md": "before" });
    expect((await fx.client.delete(`${fx.base}/branch/closed`)).status).toBe(204);
    const before = await snapshot(app, fx);
    const res = await fx.client.post(`${fx.base}/commit`, {
      branch: "closed",
      message: "too late",
      files: [{ path: "c.md", content: b64("after") }],
    });
    expectError(res, 409, "BRANCH_NOT_ACTIVE");
    expect(await snapshot(app, fx)).toEqual(before);
  });
});
