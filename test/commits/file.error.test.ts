import { beforeAll, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { commit, createBranch, expectError, repoWithOwner } from "./fixtures.ts";

let before: number;
let created: number;
let deleted: number;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  before = await commit(fx, "main", { "other.md": "o", "branch-drops.md": "d" });
  created = await commit(fx, "main", { "doc.md": "v1" });
  await createBranch(fx, "topic");
  deleted = await commit(fx, "main", { "doc.md": null, "after-base.md": "late" });
  await commit(fx, "topic", { "branch-drops.md": null });
});

const get = (rawPath: string, q = "") => fx.client.get(`${fx.base}/file/${rawPath}${q}`);

describe("a file that is absent at that branch and sequence answers 404 FILE_NOT_FOUND", () => {
  it("before it was created", async () => {
    const msg = expectError(await get("doc.md", `?at=${before}`), 404, "FILE_NOT_FOUND");
    expect(msg).toContain("doc.md");
    expectError(await get("doc.md", "?at=0"), 404, "FILE_NOT_FOUND");
  });

  it("after it was deleted, and still at the sequence before the deletion", async () => {
    expectError(await get("doc.md"), 404, "FILE_NOT_FOUND");
    expectError(await get("doc.md", `?at=${deleted}`), 404, "FILE_NOT_FOUND");
    expect((await get("doc.md", `?at=${created}`)).status).toBe(200);
  });

  it("when it never existed", async () => {
    expectError(await get("never/was.md"), 404, "FILE_NOT_FOUND");
  });

  it("on a branch that deleted it, though main still has it", async () => {
    expectError(await get("branch-drops.md", "?branch=topic"), 404, "FILE_NOT_FOUND");
    expect((await get("branch-drops.md")).status).toBe(200);
  });

  it("on a branch, for a file main gained after the branch's base", async () => {
    expectError(await get("after-base.md", "?branch=topic"), 404, "FILE_NOT_FOUND");
  });
});

describe("reading a file with bad input", () => {
  it("refuses an at that is not a number with 400 naming query.at", async () => {
    for (const at of ["abc", "-1", "2.0"])
      expect(expectError(await get("other.md", `?at=${at}`), 400, "VALIDATION_FAILED")).toContain("query.at");
  });

  it("refuses an at beyond the branch head with 400 SEQUENCE_OUT_OF_RANGE", async () => {
    const [{ last }] = (await app.sql("SELECT last_sequence AS last FROM repos WHERE id = $1", [
      fx.repoId,
    ])) as [{ last: number }];
    expectError(await get("other.md", `?at=${last + 1}`), 400, "SEQUENCE_OUT_OF_RANGE");
    // topic's head is below the repo's last sequence: at=last is beyond it.
    const topic = okBody(
      await api(fx.client).get("/repos/:repo*/-/branch/:branch*", {
        params: { repo: fx.repo, branch: "topic" },
      }),
    );
    expectError(
      await get("other.md", `?branch=topic&at=${topic.head_sequence + 1}`),
      400,
      "SEQUENCE_OUT_OF_RANGE",
    );
  });

  for (const [label, raw] of [
    ["a '..' segment", "a%2F..%2Fb.md"],
    ["a backslash", "a%5Cb.md"],
    ["an empty segment", "a%2F%2Fb.md"],
    ["NUL", "a%00b.md"],
    ["over 1,024 bytes", encodeURIComponent("é".repeat(513))],
  ] as const) {
    it(`refuses a path with ${label} with 400 INVALID_PATH`, async () => {
      expect(expectError(await get(raw), 400, "INVALID_PATH")).toContain("path.path");
    });
  }

  it("answers 404 BRANCH_NOT_FOUND for an unknown branch and 400 for a forbidden name", async () => {
    expectError(await get("other.md", "?branch=ghost"), 404, "BRANCH_NOT_FOUND");
    expectError(await get("other.md", `?branch=${encodeURIComponent("a b")}`), 400, "VALIDATION_FAILED");
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/file/:path*", {
        params: { repo: `${fx.org}/nope`, path: "other.md" },
      }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});
