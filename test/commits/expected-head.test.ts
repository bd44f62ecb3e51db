import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, unchecked } from "../support/api.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { b64 } from "../support/client.ts";
import { errorOf, expectOk } from "../support/world.ts";
import { commit, createBranch, type RepoFixture, repoWithOwner } from "./fixtures.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** A commit of `a.md` that expects the branch head at `expected`. */
const expecting = <E>(branch: string, expected: E, text: string) => ({
  branch,
  message: `expecting ${String(expected)}`,
  expected_head_sequence: expected,
  files: [{ path: "a.md", content: b64(text) }],
});
const post = (fx: RepoFixture, branch: string, expected: number, text = "x") =>
  api(fx.client).post("/repos/:repo*/-/commit", {
    params: { repo: fx.repo },
    body: expecting(branch, expected, text),
  });
/** The same request with an `expected_head_sequence` the route does not accept. */
const postBad = (fx: RepoFixture, branch: string, expected: unknown, text = "x") =>
  unchecked(fx.client).post("/repos/:repo*/-/commit", {
    params: { repo: fx.repo },
    body: expecting(branch, expected, text),
  });

const counts = async (fx: RepoFixture) => {
  const [row] = await app.sql<{ commits: number; last: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM commits WHERE repo_id = $1) AS commits,
            (SELECT last_sequence::int FROM repos WHERE id = $1) AS last,
            (SELECT count(*)::int FROM events WHERE type = 'com.svc.commit.created' AND data->>'repo' = $2) AS events`,
    [fx.repoId, fx.repo],
  );
  return row;
};

describe("a commit with expected_head_sequence", () => {
  it("commits when the branch is still at the expected head", async () => {
    const fx = await repoWithOwner(app);
    const first = await commit(fx, "main", { "a.md": "one" });
    const res = await post(fx, "main", first, "two");
    expectOk(res, 201);
    expect(res.body.sequence).toBe(first + 1);
  });

  it("expects 0 on a repo with no commits yet", async () => {
    const fx = await repoWithOwner(app);
    const res = await post(fx, "main", 0);
    expectOk(res, 201);
  });

  it("answers 409 HEAD_MOVED with the current head when the branch has moved, and writes nothing", async () => {
    const fx = await repoWithOwner(app);
    const first = await commit(fx, "main", { "a.md": "one" });
    const second = await commit(fx, "main", { "a.md": "two" });
    const before = await counts(fx);
    const res = await post(fx, "main", first, "stale");
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "HEAD_MOVED", head_sequence: second });
    expect(errorOf(res).error).toMatch(/sequence 2, not the expected 1/);
    // No commit, no event, and the sequence taken with the lock rolled back (no gap).
    expect(await counts(fx)).toEqual(before);
    expect((await post(fx, "main", second, "fresh")).body.sequence).toBe(second + 1);
  });

  it("compares with the branch's own head, not the repo's last sequence", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "a.md": "one" });
    const branch = await createBranch(fx, "feature");
    await commit(fx, "main", { "a.md": "two" }); // the repo moves, the branch does not
    const res = await post(fx, "feature", branch.head_sequence);
    expectOk(res, 201);
    const stale = await post(fx, "feature", branch.head_sequence);
    expect(stale.body).toMatchObject({ code: "HEAD_MOVED", head_sequence: res.body.sequence });
  });

  it("lets exactly one of several concurrent commits with the same expected head win", async () => {
    const fx = await repoWithOwner(app);
    const head = await commit(fx, "main", { "a.md": "base" });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(fx, "main", head, `racer ${i}`)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 201)!;
    expect(winner.body.sequence).toBe(head + 1);
    for (const loser of results.filter((r) => r.status === 409))
      expect(loser.body).toMatchObject({ code: "HEAD_MOVED", head_sequence: head + 1 });
    expect((await counts(fx))?.commits).toBe(2);
  });

  it.each([
    ["negative", -1],
    ["fractional", 1.5],
    ["a string", "1"],
  ])("is refused with 400 when %s", async (_name, expected) => {
    const fx = await repoWithOwner(app);
    const res = await postBad(fx, "main", expected);
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("VALIDATION_FAILED");
    expect((await counts(fx))?.commits).toBe(0);
  });
});
