import { describe, expect, it } from "vitest";
import { branch, commitAs, markMerged, state, team, teamOnFeat } from "../reviews/fixtures.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, expectStatus, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);
const t = useFixture(() => teamOnFeat(app));

const report = (body: unknown) => t.as(t.writer).post(`${t.base}/check`, body);
const ok = { branch: "feat", check_name: "ci/test", status: "passed" };

/** Sends `body`, expects a refusal with `status`/`code` whose message names `field`, and no change. */
async function refused(body: unknown, status: number, code: string, field?: string) {
  const before = await state(t);
  const msg = expectError(await report(body), status, code);
  if (field) expect(msg).toContain(field);
  expect(await state(t)).toEqual(before);
}

describe("reporting a check run with bad input", () => {
  for (const [label, name] of [
    ["an empty name", ""],
    ["a leading '/'", "/ci/test"],
    ["a trailing '/'", "ci/"],
    ["an empty segment", "ci//test"],
    ["a '..' segment", "ci/../test"],
    ["a '.' segment", "ci/./test"],
    ["a space", "ci test"],
    ["a colon", "ci:test"],
    ["a backslash", "ci\\test"],
    ["a non-ASCII letter", "ci/tést"],
    ["201 characters", "x".repeat(201)],
  ] as const)
    it(`refuses a check name with ${label}: 400 naming body.check_name, no change`, async () => {
      await refused({ ...ok, check_name: name }, 400, "VALIDATION_FAILED", "body.check_name");
    });

  it("refuses a missing or non-string check name", async () => {
    await refused({ branch: "feat", status: "passed" }, 400, "VALIDATION_FAILED", "body.check_name");
    await refused({ ...ok, check_name: 7 }, 400, "VALIDATION_FAILED", "body.check_name");
  });

  for (const status of [undefined, "success", "PASSED", "", null])
    it(`refuses status ${JSON.stringify(status)} with 400 naming body.status`, async () => {
      await refused({ ...ok, status }, 400, "VALIDATION_FAILED", "body.status");
    });

  for (const [label, url] of [
    ["an ftp URL", "ftp://ci.example.com/log"],
    ["a javascript: URL", "javascript:alert(1)"],
    ["a relative URL", "/runs/1/log"],
    ["text", "see the CI"],
    ["an empty string", ""],
    ["a number", 42],
    ["a URL over 2,048 characters", `https://ci.example.com/${"x".repeat(2048)}`],
  ] as const)
    it(`refuses log_url as ${label} with 400 naming body.log_url`, async () => {
      await refused({ ...ok, log_url: url }, 400, "VALIDATION_FAILED", "body.log_url");
    });

  it("accepts an http log URL of exactly 2,048 characters", async () => {
    const base = "http://ci.example.com/";
    const url = base + "y".repeat(2048 - base.length);
    const res = await report({ ...ok, check_name: "long-url", log_url: url });
    expect(expectStatus(res, 201)).toMatchObject({ log_url: url });
  });

  for (const sequence of ["3", 1.5, true])
    it(`refuses sequence ${JSON.stringify(sequence)} (not a whole number) with 400 naming body.sequence`, async () => {
      await refused({ ...ok, sequence }, 400, "VALIDATION_FAILED", "body.sequence");
    });

  it("refuses a sequence beyond the head, 0 or negative with 400 SEQUENCE_OUT_OF_RANGE", async () => {
    for (const sequence of [t.head + 1, t.head + 1000, 0, -1])
      await refused({ ...ok, sequence }, 400, "SEQUENCE_OUT_OF_RANGE", "body.sequence");
  });

  it("refuses any check run on a branch with no commits at all (head 0)", async () => {
    const u = await team(app);
    const before = await state(u);
    expectError(
      await api(u.client).post("/repos/:repo*/-/check", {
        params: { repo: u.repo },
        body: { branch: "main", check_name: "x", status: "passed" },
      }),
      400,
      "SEQUENCE_OUT_OF_RANGE",
    );
    expect(await state(u)).toEqual(before);
  });

  it("refuses a body that is not JSON with 400 MALFORMED_JSON", async () => {
    const res = await t
      .as(t.writer)
      .raw("POST", `${t.base}/check`, { body: "[", headers: { "content-type": "application/json" } });
    expectError(res, 400, "MALFORMED_JSON");
  });
});

describe("reporting a check run on a branch that takes none", () => {
  it("answers 404 BRANCH_NOT_FOUND for an unknown branch, no change", async () => {
    await refused({ ...ok, branch: "ghost" }, 404, "BRANCH_NOT_FOUND");
  });

  it("refuses a merged branch with 409 BRANCH_NOT_ACTIVE, no change and no event", async () => {
    await branch(t, "landed");
    await commitAs(t, t.writer, "landed");
    await markMerged(t, "landed");
    await refused({ ...ok, branch: "landed" }, 409, "BRANCH_NOT_ACTIVE");
  });

  it("refuses an abandoned branch with 409 BRANCH_NOT_ACTIVE, no change", async () => {
    await branch(t, "dropped");
    await commitAs(t, t.writer, "dropped");
    expect(
      (
        await api(t.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: t.repo, branch: "dropped" },
        })
      ).status,
    ).toBe(204);
    await refused({ ...ok, branch: "dropped", status: "pending" }, 409, "BRANCH_NOT_ACTIVE");
  });
});

describe("listing check runs with bad input", () => {
  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(
      await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
        params: { repo: t.repo, branch: "ghost" },
      }),
      404,
      "BRANCH_NOT_FOUND",
    );
  });

  it("refuses an at beyond the head with 400 SEQUENCE_OUT_OF_RANGE", async () => {
    expect(
      expectError(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
          params: { repo: t.repo, branch: "feat" },
          query: { at: String(t.head + 1) },
        }),
        400,
        "SEQUENCE_OUT_OF_RANGE",
      ),
    ).toContain("query.at");
  });

  for (const at of ["x", "-2", "2.0"])
    it(`refuses at=${at} with 400 naming query.at`, async () => {
      expect(
        expectError(
          await api(t.client).get("/repos/:repo*/-/branch/:branch*/checks", {
            params: { repo: t.repo, branch: "feat" },
            query: { at },
          }),
          400,
          "VALIDATION_FAILED",
        ),
      ).toContain("query.at");
    });
});
