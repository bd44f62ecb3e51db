import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { expectOk, useFixture } from "../support/world.ts";
import { commit, expectError, type RepoFixture, repoWithOwner, snapshot } from "./fixtures.ts";

// A small body limit: a 4 KB commit is over it, everything else in this file is under it.
const app = useFixture(() => startTestApp({ SVC_MAX_BODY_BYTES: "2048" }));
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "small" });
});

describe("a commit over a limit is refused, and nothing is written", () => {
  it("a body over SVC_MAX_BODY_BYTES: 413 PAYLOAD_TOO_LARGE", async () => {
    const before = await snapshot(app, fx);
    const res = await api(fx.client).post("/repos/:repo*/-/commit", {
      params: { repo: fx.repo },
      body: {
        branch: "main",
        message: "too big",
        files: [{ path: "big.txt", content: b64("x".repeat(4096)) }],
      },
    });
    const msg = expectError(res, 413, "PAYLOAD_TOO_LARGE");
    expect(msg).toContain("2048");
    expect(await snapshot(app, fx)).toEqual(before);
    // The server still serves the next request.
    expect(
      (await api(fx.client).get("/repos/:repo*/-/file/:path*", { params: { repo: fx.repo, path: "a.md" } }))
        .status,
    ).toBe(200);
  });

  it("a body just under the limit is accepted", async () => {
    const seq = await commit(fx, "main", { "fits.txt": "y".repeat(1000) });
    expect(seq).toBe(2);
  });
});

describe("counts and lengths over the limits (default body limit)", () => {
  let big: TestApp;
  let bfx: RepoFixture;
  beforeAll(async () => {
    big = await startTestApp();
    bfx = await repoWithOwner(big);
  });
  afterAll(() => big.close());

  it("more than 1,000 files: 400 naming body.files, nothing written", async () => {
    const before = await snapshot(big, bfx);
    const files = Array.from({ length: 1001 }, (_, i) => ({ path: `f${i}.md`, content: b64(`${i}`) }));
    const msg = expectError(
      await api(bfx.client).post("/repos/:repo*/-/commit", {
        params: { repo: bfx.repo },
        body: { branch: "main", message: "m", files },
      }),
      400,
      "VALIDATION_FAILED",
    );
    expect(msg).toContain("body.files");
    expect(msg).toContain("1000");
    expect(await snapshot(big, bfx)).toEqual(before);
  });

  it("exactly 1,000 files is accepted", async () => {
    const files = Array.from({ length: 1000 }, (_, i) => ({ path: `f${i}.md`, content: b64(`${i}`) }));
    const res = await api(bfx.client).post("/repos/:repo*/-/commit", {
      params: { repo: bfx.repo },
      body: { branch: "main", message: "m", files },
    });
    expectOk(res, 201);
    const [row] = await big.sql("SELECT count(*)::int AS n FROM file_changes WHERE repo_id = $1", [
      bfx.repoId,
    ]);
    expect(row).toEqual({ n: 1000 });
  });

  it("a message over 65,536 characters: 400 naming body.message, nothing written", async () => {
    const before = await snapshot(big, bfx);
    const msg = expectError(
      await api(bfx.client).post("/repos/:repo*/-/commit", {
        params: { repo: bfx.repo },
        body: {
          branch: "main",
          message: "m".repeat(65_537),
          files: [{ path: "a.md", content: b64("x") }],
        },
      }),
      400,
      "VALIDATION_FAILED",
    );
    expect(msg).toContain("body.message");
    expect(await snapshot(big, bfx)).toEqual(before);
  });
});
