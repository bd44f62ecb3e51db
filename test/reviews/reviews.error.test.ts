import { describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, useFixture } from "../support/world.ts";
import { branch, commitAs, eventData, markMerged, state, teamOnFeat } from "./fixtures.ts";

const app = useFixture(startTestApp);
const t = useFixture(() => teamOnFeat(app));

const review = (body: unknown) => t.as(t.writer2).post(`${t.base}/review`, body);

describe("submitting a review with bad input", () => {
  for (const [label, body, field] of [
    ["no branch", { status: "approved", body: "" }, "body.branch"],
    ["a malformed branch name", { branch: "a..b", status: "approved", body: "" }, "body.branch"],
    ["no status", { branch: "feat", body: "" }, "body.status"],
    ["an unknown status", { branch: "feat", status: "lgtm", body: "" }, "body.status"],
    ["an upper-case status", { branch: "feat", status: "APPROVED", body: "" }, "body.status"],
    ["no body", { branch: "feat", status: "approved" }, "body.body"],
    ["a body that is not a string", { branch: "feat", status: "approved", body: 5 }, "body.body"],
    [
      "a body over 65,536 characters",
      { branch: "feat", status: "approved", body: "x".repeat(65_537) },
      "body.body",
    ],
  ] as const) {
    it(`refuses ${label} with 400 naming ${field}, and changes nothing`, async () => {
      const before = await state(t);
      const msg = expectError(await review(body), 400, "VALIDATION_FAILED");
      expect(msg).toContain(field);
      expect(await state(t)).toEqual(before);
    });
  }

  it("accepts a body of exactly 65,536 characters", async () => {
    expect((await review({ branch: "feat", status: "rejected", body: "y".repeat(65_536) })).status).toBe(201);
  });

  it("refuses a body that is not JSON with 400 MALFORMED_JSON", async () => {
    const res = await t
      .as(t.writer2)
      .raw("POST", `${t.base}/review`, { body: "{", headers: { "content-type": "application/json" } });
    expectError(res, 400, "MALFORMED_JSON");
  });
});

describe("submitting a review of a branch that cannot be reviewed", () => {
  it("refuses main with 400 and changes nothing", async () => {
    const before = await state(t);
    const msg = expectError(
      await review({ branch: "main", status: "approved", body: "" }),
      400,
      "VALIDATION_FAILED",
    );
    expect(msg).toContain("body.branch");
    expect(await state(t)).toEqual(before);
  });

  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    const before = await state(t);
    expectError(await review({ branch: "ghost", status: "approved", body: "" }), 404, "BRANCH_NOT_FOUND");
    expect(await state(t)).toEqual(before);
  });

  it("refuses a merged branch with 409 BRANCH_NOT_ACTIVE, records no event", async () => {
    await branch(t, "landed");
    await commitAs(t, t.writer, "landed");
    await markMerged(t, "landed");
    const before = await state(t);
    for (const status of ["approved", "rejected"])
      expectError(await review({ branch: "landed", status, body: "" }), 409, "BRANCH_NOT_ACTIVE");
    expect(await state(t)).toEqual(before);
    expect((await eventData(t, "com.svc.review.submitted")).filter((e) => e["branch"] === "landed")).toEqual(
      [],
    );
  });

  it("refuses an abandoned branch with 409 BRANCH_NOT_ACTIVE", async () => {
    await branch(t, "dropped");
    expect(
      (
        await api(t.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: t.repo, branch: "dropped" },
        })
      ).status,
    ).toBe(204);
    const before = await state(t);
    expectError(await review({ branch: "dropped", status: "rejected", body: "" }), 409, "BRANCH_NOT_ACTIVE");
    expect(await state(t)).toEqual(before);
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo", async () => {
    expectError(
      await t
        .as(t.writer)
        .post(`/repos/${t.org}/nope/-/review`, { branch: "feat", status: "approved", body: "" }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});

describe("listing reviews with bad input", () => {
  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(
      await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
        params: { repo: t.repo, branch: "ghost" },
      }),
      404,
      "BRANCH_NOT_FOUND",
    );
  });

  it("refuses an at beyond the branch head with 400 SEQUENCE_OUT_OF_RANGE", async () => {
    const msg = expectError(
      await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
        params: { repo: t.repo, branch: "feat" },
        query: { at: String(t.head + 1) },
      }),
      400,
      "SEQUENCE_OUT_OF_RANGE",
    );
    expect(msg).toContain("query.at");
  });

  for (const at of ["abc", "-1", "1.5", ""]) {
    it(`refuses at=${JSON.stringify(at)} with 400 naming query.at`, async () => {
      const msg = expectError(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
          params: { repo: t.repo, branch: "feat" },
          query: { at },
        }),
        400,
        "VALIDATION_FAILED",
      );
      expect(msg).toContain("query.at");
    });
  }

  it("refuses a malformed branch name in the path with 400", async () => {
    expectError(
      await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
        params: { repo: t.repo, branch: "a~b" },
      }),
      400,
      "VALIDATION_FAILED",
    );
  });

  it("answers 405 for a method the path does not serve", async () => {
    const res = await api(t.client).delete("/repos/:repo*/-/branch/:branch*", {
      params: { repo: t.repo, branch: "feat/reviews" },
    });
    expect(res.status).toBe(405);
  });
});
