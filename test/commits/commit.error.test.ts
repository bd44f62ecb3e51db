import { beforeAll, describe, expect, it } from "vitest";
import { api, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { useFixture } from "../support/world.ts";
import { commit, createBranch, expectError, repoWithOwner, snapshot } from "./fixtures.ts";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "exists.md": "here", "gone.md": "soon gone" });
  await commit(fx, "main", { "gone.md": null });
  await createBranch(fx, "topic");
});

const ok = { path: "fine.md", content: b64("fine") };
const withFile = (file: unknown) => ({ branch: "main", message: "m", files: [ok, file] });

/** Posts `body` as a commit, asserts the error, that it names `names`, and that nothing was written. */
async function refused(body: unknown, status: number, code: string, names: string) {
  const before = await snapshot(app, fx);
  const msg = expectError(
    await unchecked(fx.client).post("/repos/:repo*/-/commit", { params: { repo: fx.repo }, body }),
    status,
    code,
  );
  expect(msg).toContain(names);
  expect(await snapshot(app, fx)).toEqual(before);
  return msg;
}

describe("a commit with a bad path is refused with 400 INVALID_PATH, and nothing is written", () => {
  for (const [label, path, problem] of [
    ["a '..' segment", "a/../b.md", "'..'"],
    ["a leading '..'", "../b.md", "'..'"],
    ["a leading '/'", "/abs.md", "'/'"],
    ["a backslash", "a\\b.md", "backslash"],
    ["NUL", "a\u0000b.md", "NUL"],
    ["an empty segment", "a//b.md", "empty segment"],
    ["a trailing '/'", "dir/", "empty segment"],
    ["a '.' segment", "./a.md", "'.'"],
    ["nothing", "", "empty"],
    ["1,025 bytes of ASCII", "a".repeat(1025), "1024 bytes"],
    ["513 two-byte characters (1,026 bytes)", "é".repeat(513), "1024 bytes"],
  ] as const) {
    it(`with ${label}`, async () => {
      const msg = await refused(
        withFile({ path, content: b64("x") }),
        400,
        "INVALID_PATH",
        "body.files.1.path",
      );
      expect(msg).toContain(problem);
    });
  }
});

describe("a commit with bad content is refused, and nothing is written", () => {
  for (const [label, content] of [
    ["characters outside base64", "not base64!"],
    ["missing padding", "YQ"],
    ["the URL-safe alphabet", "-_-_"],
    ["whitespace", "YWJj\nZGVm"],
  ] as const) {
    it(`with ${label}: 400 INVALID_CONTENT naming the file`, async () => {
      await refused(withFile({ path: "x.md", content }), 400, "INVALID_CONTENT", "body.files.1.content");
    });
  }

  it("with a content_type that is not a MIME type: 400 naming content_type", async () => {
    await refused(
      withFile({ path: "x.md", content: b64("x"), content_type: "not a type" }),
      400,
      "VALIDATION_FAILED",
      "body.files.1.content_type",
    );
  });
});

describe("a commit with a bad file list is refused, and nothing is written", () => {
  it("when a path appears twice: 400 DUPLICATE_PATH naming the path", async () => {
    const msg = await refused(
      { branch: "main", message: "m", files: [ok, { path: "fine.md", content: b64("again") }] },
      400,
      "DUPLICATE_PATH",
      "body.files.1.path",
    );
    expect(msg).toContain("fine.md");
  });

  it("when files is empty: 400 naming body.files", async () => {
    await refused({ branch: "main", message: "m", files: [] }, 400, "VALIDATION_FAILED", "body.files");
  });

  it("when it deletes a path that does not exist: 400 naming the path, the other changes not written", async () => {
    const msg = await refused(
      { branch: "main", message: "m", files: [ok, { path: "never.md", content: null }] },
      400,
      "VALIDATION_FAILED",
      "never.md",
    );
    expect(msg).toContain("body.files");
  });

  it("when it deletes a path that was already deleted", async () => {
    await refused(
      { branch: "main", message: "m", files: [{ path: "gone.md" }] },
      400,
      "VALIDATION_FAILED",
      "gone.md",
    );
  });

  it("when it deletes on a branch a path that main only gained after the base", async () => {
    await commit(fx, "main", { "later.md": "after the branch" });
    await refused(
      { branch: "topic", message: "m", files: [{ path: "later.md" }] },
      400,
      "VALIDATION_FAILED",
      "later.md",
    );
  });
});

describe("a commit that changes nothing is refused with 409 EMPTY_COMMIT, as git refuses it", () => {
  it("when every file is already on the branch with the same content", async () => {
    const msg = await refused(
      { branch: "main", message: "again", files: [{ path: "exists.md", content: b64("here") }] },
      409,
      "EMPTY_COMMIT",
      "nothing to commit",
    );
    expect(msg).toContain("'main'");
  });

  it("when a branch rewrites files it sees through main unchanged, and answers the head", async () => {
    await commit(fx, "topic", { "own.md": "mine" });
    const res = await unchecked(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "topic",
        message: "same again",
        files: [
          { path: "own.md", content: b64("mine") },
          { path: "exists.md", content: b64("here") },
        ],
      },
    });
    expectError(res, 409, "EMPTY_COMMIT");
    const branch = await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
      params: { repo: fx.repo, branch: "topic" },
    });
    expect(res.body).toMatchObject({
      head_sequence: (branch.body as { head_sequence: number }).head_sequence,
    });
  });

  it("accepts a commit where one file of several changes, or only the content type does", async () => {
    const one = await unchecked(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: { branch: "main", message: "m", files: [{ path: "exists.md", content: b64("here") }, ok] },
    });
    expect(one.status).toBe(201);
    const typed = await unchecked(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "main",
        message: "m",
        files: [{ path: "exists.md", content: b64("here"), content_type: "text/plain; charset=utf-8" }],
      },
    });
    expect(typed.status).toBe(201);
  });
});

describe("a commit with a bad message or branch is refused, and nothing is written", () => {
  it("when the message is empty or missing: 400 naming body.message", async () => {
    await refused({ branch: "main", message: "", files: [ok] }, 400, "VALIDATION_FAILED", "body.message");
    await refused({ branch: "main", files: [ok] }, 400, "VALIDATION_FAILED", "body.message");
  });

  for (const [label, branch] of [
    ["a space", "bad name"],
    ["'..'", "a..b"],
    ["a leading '-'", "-x"],
    ["'~'", "a~b"],
    ["a trailing '/'", "x/"],
  ] as const) {
    it(`when the branch name has ${label}: 400 naming body.branch`, async () => {
      await refused({ branch, message: "m", files: [ok] }, 400, "VALIDATION_FAILED", "body.branch");
    });
  }

  it("when the branch does not exist: 404 BRANCH_NOT_FOUND", async () => {
    await refused({ branch: "ghost", message: "m", files: [ok] }, 404, "BRANCH_NOT_FOUND", "ghost");
  });

  it("when the repo does not exist: 404 REPO_NOT_FOUND", async () => {
    const before = await snapshot(app, fx);
    const res = await api(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: `${fx.org}/nope` },
      body: {
        branch: "main",
        message: "m",
        files: [ok],
      },
    });
    expectError(res, 404, "REPO_NOT_FOUND");
    expect(await snapshot(app, fx)).toEqual(before);
  });
});

describe("a commit body of the wrong shape is refused, and nothing is written", () => {
  it("when the JSON is malformed: 400 MALFORMED_JSON", async () => {
    const before = await snapshot(app, fx);
    const res = await fx.client.raw("POST", `${fx.base}/commit`, {
      body: '{"branch": "main", "message": "m", "files": [',
      headers: { "content-type": "application/json" },
    });
    expectError(res, 400, "MALFORMED_JSON");
    expect(await snapshot(app, fx)).toEqual(before);
  });

  for (const [label, body, names] of [
    ["files is a string", { branch: "main", message: "m", files: "a.md" }, "body.files"],
    ["files is an object", { branch: "main", message: "m", files: { path: "a.md" } }, "body.files"],
    ["message is a number", { branch: "main", message: 5, files: [ok] }, "body.message"],
    ["branch is missing", { message: "m", files: [ok] }, "body.branch"],
    [
      "a path is a number",
      { branch: "main", message: "m", files: [{ path: 7, content: b64("x") }] },
      "body.files.0.path",
    ],
    [
      "content is a number",
      { branch: "main", message: "m", files: [{ path: "a.md", content: 7 }] },
      "body.files.0.content",
    ],
    ["a file is a string", { branch: "main", message: "m", files: ["a.md"] }, "body.files.0"],
    ["the body is an array", [ok], "body"],
  ] as const) {
    it(`when ${label}: 400 VALIDATION_FAILED naming ${names}`, async () => {
      await refused(body, 400, "VALIDATION_FAILED", names);
    });
  }
});

describe("getting a commit", () => {
  it("answers 404 COMMIT_NOT_FOUND for a sequence with no commit", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
        params: { repo: fx.repo, sequence: "999" },
      }),
      404,
      "COMMIT_NOT_FOUND",
    );
    expectError(
      await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
        params: { repo: fx.repo, sequence: "0" },
      }),
      404,
      "COMMIT_NOT_FOUND",
    );
  });

  it("answers 400 for a sequence that is not a number", async () => {
    for (const s of ["abc", "-1", "1.5"])
      expect(
        expectError(
          await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
            params: { repo: fx.repo, sequence: s },
          }),
          400,
          "VALIDATION_FAILED",
        ),
      ).toContain("path.sequence");
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/commit/:sequence", {
        params: { repo: `${fx.org}/nope`, sequence: "1" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});
