import { beforeAll, describe, expect, it } from "vitest";
import { branch, commitAs, markMerged, state, team } from "../reviews/fixtures.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectError, expectOk, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);
const t = useFixture(() => team(app));
beforeAll(async () => {
  await branch(t, "feat");
  await commitAs(t, t.writer, "feat");
});

const comment = (body: unknown) => t.as(t.writer).post(`${t.base}/comment`, body);
const ok = { branch: "feat", path: "a.md", body: "hello" };
/** A comment made with `ok`, as the writer. */
const made = async () =>
  okBody(await api(t.as(t.writer)).post("/repos/:repo*/-/comment", { params: { repo: t.repo }, body: ok }));

async function refused(body: unknown, status: number, code: string, field?: string) {
  const before = await state(t);
  const msg = expectError(await comment(body), status, code);
  if (field) expect(msg).toContain(field);
  expect(await state(t)).toEqual(before);
}

describe("replying to a comment that is not there to answer", () => {
  it("refuses reply_to naming no comment, one on another path or branch, or no UUID: 400, no change", async () => {
    const parent = await made();
    await branch(t, "other");
    const elsewhere = okBody(
      await api(t.as(t.writer)).post("/repos/:repo*/-/comment", {
        params: { repo: t.repo },
        body: { branch: "other", path: "a.md", body: "there" },
      }),
    );
    for (const reply_to of ["00000000-0000-4000-8000-000000000000", elsewhere.id])
      await refused({ ...ok, reply_to }, 400, "VALIDATION_FAILED", "body.reply_to");
    await refused({ ...ok, path: "b.md", reply_to: parent.id }, 400, "VALIDATION_FAILED", "body.reply_to");
    await refused({ ...ok, reply_to: "not-a-uuid" }, 400, "VALIDATION_FAILED", "reply_to");
  });
});

describe("adding a comment with bad input", () => {
  for (const [label, path] of [
    ["a leading '/'", "/a.md"],
    ["a '..' segment", "docs/../a.md"],
    ["a '.' segment", "./a.md"],
    ["an empty segment", "docs//a.md"],
    ["a trailing '/'", "docs/"],
    ["a backslash", "docs\\a.md"],
    ["a control character", "a\u0007.md"],
    ["an empty path", ""],
    ["over 1,024 bytes", "é".repeat(513)],
  ] as const)
    it(`refuses a path with ${label}: 400 INVALID_PATH naming body.path, no change`, async () => {
      await refused({ ...ok, path }, 400, "INVALID_PATH", "body.path");
    });

  it("refuses a missing or non-string path with 400 naming body.path", async () => {
    await refused({ branch: "feat", body: "x" }, 400, "VALIDATION_FAILED", "body.path");
    await refused({ ...ok, path: ["a.md"] }, 400, "VALIDATION_FAILED", "body.path");
  });

  for (const [label, body] of [
    ["an empty body", ""],
    ["a body over 65,536 characters", "x".repeat(65_537)],
    ["a body that is not a string", { text: "x" }],
    ["no body", undefined],
  ] as const)
    it(`refuses ${label} with 400 naming body.body, no change`, async () => {
      await refused({ ...ok, body }, 400, "VALIDATION_FAILED", "body.body");
    });

  it("refuses a missing or malformed branch with 400 naming body.branch", async () => {
    await refused({ path: "a.md", body: "x" }, 400, "VALIDATION_FAILED", "body.branch");
    await refused({ ...ok, branch: "bad name" }, 400, "VALIDATION_FAILED", "body.branch");
  });

  it("answers 404 BRANCH_NOT_FOUND for an unknown branch, no change", async () => {
    await refused({ ...ok, branch: "ghost" }, 404, "BRANCH_NOT_FOUND");
  });

  it("refuses a merged or abandoned branch with 409 BRANCH_NOT_ACTIVE, no change", async () => {
    await branch(t, "landed");
    await markMerged(t, "landed");
    await refused({ ...ok, branch: "landed" }, 409, "BRANCH_NOT_ACTIVE");
    await branch(t, "dropped");
    expect(
      (
        await api(t.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: t.repo, branch: "dropped" },
        })
      ).status,
    ).toBe(204);
    await refused({ ...ok, branch: "dropped" }, 409, "BRANCH_NOT_ACTIVE");
  });
});

describe("listing comments with bad input", () => {
  it("answers 404 BRANCH_NOT_FOUND for an unknown branch", async () => {
    expectError(
      await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
        params: { repo: t.repo, branch: "ghost" },
      }),
      404,
      "BRANCH_NOT_FOUND",
    );
  });

  for (const path of ["/a.md", "a/../b", "a//b", ""])
    it(`refuses path=${JSON.stringify(path)} with 400 INVALID_PATH naming query.path`, async () => {
      expect(
        expectError(
          await api(t.client).get("/repos/:repo*/-/branch/:branch*/comments", {
            params: { repo: t.repo, branch: "feat" },
            query: { path },
          }),
          400,
          "INVALID_PATH",
        ),
      ).toContain("query.path");
    });
});

describe("deleting a comment that cannot be deleted", () => {
  for (const id of [
    "42",
    "not-a-uuid",
    "00000000-0000-0000-0000-00000000000g",
    "0000000000000000000000000000000",
  ])
    it(`refuses the malformed id ${JSON.stringify(id)} with 400 naming path.id`, async () => {
      expect(
        expectError(
          await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", { params: { repo: t.repo, id } }),
          400,
          "VALIDATION_FAILED",
        ),
      ).toContain("path.id");
    });

  it("answers 404 COMMENT_NOT_FOUND for an unknown id, and for a second delete", async () => {
    expectError(
      await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", {
        params: { repo: t.repo, id: "3f1c6a52-8a0e-4d7e-9f55-0c1b2d3e4f50" },
      }),
      404,
      "COMMENT_NOT_FOUND",
    );
    const c = await made();
    expect(
      (
        await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", {
          params: { repo: t.repo, id: c.id },
        })
      ).status,
    ).toBe(204);
    const before = await state(t);
    expectError(
      await api(t.as(t.writer)).delete("/repos/:repo*/-/comment/:id", {
        params: { repo: t.repo, id: c.id },
      }),
      404,
      "COMMENT_NOT_FOUND",
    );
    expect(await state(t)).toEqual(before);
  });

  it("answers 404 COMMENT_NOT_FOUND for a comment of another repo, and leaves it", async () => {
    const u = await team(app);
    await branch(u, "feat");
    const theirs = await api(u.client).post("/repos/:repo*/-/comment", {
      params: { repo: u.repo },
      body: ok,
    });
    expectOk(theirs, 201);
    // t's owner is admin on t (and maintainer-or-more there) but the comment belongs to u.
    expectError(
      await api(t.client).delete("/repos/:repo*/-/comment/:id", {
        params: { repo: t.repo, id: theirs.body.id },
      }),
      404,
      "COMMENT_NOT_FOUND",
    );
    expect(
      okBody(
        await api(u.client).get("/repos/:repo*/-/branch/:branch*/comments", {
          params: { repo: u.repo, branch: "feat" },
        }),
      ).comments,
    ).toHaveLength(1);
  });

  it("answers 405 for PATCH on a comment", async () => {
    const c = await made();
    expect((await t.as(t.writer).patch(`${t.base}/comment/${c.id}`, { body: "edited" })).status).toBe(405);
  });
});
