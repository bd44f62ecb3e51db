import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { api, type Options, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectOk, expectStatus, useFixture } from "../support/world.ts";
import { branch, commitAs, eventData, markMerged, type Team, TIMESTAMP, team, UUID } from "./fixtures.ts";

const app = useFixture(startTestApp);

const review = (t: Team, who: string, body: Options<"POST", "/repos/:repo*/-/review">["body"]) =>
  api(t.as(who)).post("/repos/:repo*/-/review", { params: { repo: t.repo }, body });

describe("submitting a review", () => {
  it("approves a branch at its current head: 201 with the review record", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const head = await commitAs(t, t.writer, "feat");
    const res = await review(t, t.writer2, { branch: "feat", status: "approved", body: "looks good" });
    expectOk(res, 201);
    expect(Object.keys(res.body).sort()).toEqual([
      "body",
      "branch",
      "created_at",
      "id",
      "reviewer",
      "sequence",
      "status",
    ]);
    expect(res.body).toMatchObject({
      branch: "feat",
      status: "approved",
      body: "looks good",
      reviewer: t.writer2,
      sequence: head,
    });
    expect(res.body.id).toMatch(UUID);
    expect(res.body.created_at).toMatch(TIMESTAMP);
    expect(Math.abs(Date.parse(res.body.created_at) - Date.now())).toBeLessThan(60_000);
  });

  it("records com.svc.review.submitted once, with exactly the spec's fields", async () => {
    const t = await team(app);
    await branch(t, "feat");
    const head = await commitAs(t, t.writer, "feat");
    expect((await review(t, t.maintainer, { branch: "feat", status: "rejected", body: "no" })).status).toBe(
      201,
    );
    expect(await eventData(t, "com.svc.review.submitted")).toEqual([
      { repo: t.repo, branch: "feat", sequence: head, reviewer: t.maintainer, status: "rejected" },
    ]);
  });

  it("lets the author of the branch's commits reject it", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    const res = await review(t, t.writer, { branch: "feat", status: "rejected", body: "not ready yet" });
    expectOk(res, 201);
    expect(res.body).toMatchObject({ reviewer: t.writer, status: "rejected" });
  });

  it("lets someone who committed only to main approve a branch rooted on it", async () => {
    const t = await team(app);
    await commitAs(t, t.owner, "main");
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    const res = await review(t, t.owner, { branch: "feat", status: "approved", body: "" });
    expectOk(res, 201);
    expect(res.body.body).toBe("");
  });

  it("accepts a review of a branch with no commits of its own, at its base", async () => {
    const t = await team(app);
    const base = await commitAs(t, t.owner, "main");
    await branch(t, "empty");
    const res = await review(t, t.writer, { branch: "empty", status: "approved", body: "" });
    expectOk(res, 201);
    expect(res.body.sequence).toBe(base);
  });

  it("accepts a review of a draft branch", async () => {
    const t = await team(app);
    await branch(t, "wip", true);
    await commitAs(t, t.writer, "wip");
    expect((await review(t, t.writer2, { branch: "wip", status: "approved", body: "ok" })).status).toBe(201);
  });

  it("keeps every review, including several by one reviewer", async () => {
    const t = await team(app);
    await branch(t, "feat");
    await commitAs(t, t.writer, "feat");
    for (const status of ["rejected", "approved", "approved"] as const)
      expect((await review(t, t.writer2, { branch: "feat", status, body: status })).status).toBe(201);
    const list = await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
      params: { repo: t.repo, branch: "feat" },
    });
    expectOk(list, 200);
    expect(list.body.map((r: { status: string }) => r.status)).toEqual(["rejected", "approved", "approved"]);
    expect(await eventData(t, "com.svc.review.submitted")).toHaveLength(3);
  });

  it("waits for a commit in progress and attaches to the head that commit leaves", async () => {
    const t = await team(app);
    await branch(t, "busy");
    const first = await commitAs(t, t.writer, "busy");
    // Hold the branch row as a commit does (FOR UPDATE) and move its head inside that transaction.
    const locker = new pg.Client({ connectionString: app.databaseUrl });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM branches WHERE repo_id = $1 AND name = 'busy' FOR UPDATE", [
        t.repoId,
      ]);
      let settled = false;
      const pending = review(t, t.writer2, { branch: "busy", status: "approved", body: "" }).then((r) => {
        settled = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      await locker.query(
        "UPDATE branches SET head_sequence = head_sequence + 100 WHERE repo_id = $1 AND name = 'busy'",
        [t.repoId],
      );
      await locker.query("COMMIT");
      const res = await pending;
      expectOk(res, 201);
      expect(res.body.sequence).toBe(first + 100);
    } finally {
      await locker.end();
    }
  });
});

describe("listing reviews", () => {
  let t: Team;
  let s1: number;
  let s2: number;
  beforeAll(async () => {
    t = await team(app);
    await branch(t, "feat");
    s1 = await commitAs(t, t.writer, "feat");
    expect((await review(t, t.writer2, { branch: "feat", status: "rejected", body: "one" })).status).toBe(
      201,
    );
    expect((await review(t, t.maintainer, { branch: "feat", status: "approved", body: "two" })).status).toBe(
      201,
    );
    s2 = await commitAs(t, t.writer, "feat", "b.md");
    expect((await review(t, t.writer2, { branch: "feat", status: "approved", body: "three" })).status).toBe(
      201,
    );
  });

  it("returns a bare array of reviews (the spec's words), oldest first, each at the head it was submitted at", async () => {
    const res = await api(t.as(t.reader)).get("/repos/:repo*/-/branch/:branch*/reviews", {
      params: { repo: t.repo, branch: "feat" },
    });
    expectOk(res, 200);
    expect(Array.isArray(res.body), JSON.stringify(res.body)).toBe(true);
    expect(res.body.map((r) => [r.body, r.sequence, r.reviewer, r.status])).toEqual([
      ["one", s1, t.writer2, "rejected"],
      ["two", s1, t.maintainer, "approved"],
      ["three", s2, t.writer2, "approved"],
    ]);
    for (const r of res.body) {
      expect(r.branch).toBe("feat");
      expect(r.id).toMatch(UUID);
    }
    const times = res.body.map((r) => Date.parse(r.created_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it("with at, returns only reviews at or before that sequence", async () => {
    const atS1 = await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
      params: { repo: t.repo, branch: "feat" },
      query: { at: String(s1) },
    });
    expectOk(atS1, 200);
    expect(atS1.body.map((r) => r.body)).toEqual(["one", "two"]);
    const atS2 = await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
      params: { repo: t.repo, branch: "feat" },
      query: { at: String(s2) },
    });
    expectOk(atS2, 200);
    expect(atS2.body.map((r) => r.body)).toEqual(["one", "two", "three"]);
    const before = await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
      params: { repo: t.repo, branch: "feat" },
      query: { at: String(s1 - 1) },
    });
    expect(before.body).toEqual([]);
  });

  it("returns an empty list for a branch nobody reviewed, and for main", async () => {
    await branch(t, "quiet");
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
          params: { repo: t.repo, branch: "quiet" },
        }),
      ),
    ).toEqual([]);
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
          params: { repo: t.repo, branch: "main" },
        }),
      ),
    ).toEqual([]);
  });

  it("still lists the reviews of a branch once it is merged", async () => {
    const u = await team(app);
    await branch(u, "done");
    await commitAs(u, u.writer, "done");
    expect((await review(u, u.writer2, { branch: "done", status: "approved", body: "" })).status).toBe(201);
    await markMerged(u, "done");
    expect(
      okBody(
        await api(u.client).get("/repos/:repo*/-/branch/:branch*/reviews", {
          params: { repo: u.repo, branch: "done" },
        }),
      ),
    ).toHaveLength(1);
  });
});

describe("branch names with slashes", () => {
  it("review and list work for feature/x, and GET /branch/feature/x is still the branch", async () => {
    const t = await team(app);
    await branch(t, "feature/x");
    await commitAs(t, t.writer, "feature/x");
    expect((await review(t, t.writer2, { branch: "feature/x", status: "approved", body: "" })).status).toBe(
      201,
    );
    for (const seg of ["feature/x", "feature%2Fx"]) {
      // `seg` goes into the path as written (it may be percent-encoded already): the raw client.
      const list = expectStatus(await t.client.get(`${t.base}/branch/${seg}/reviews`), 200);
      expect((list as { branch: string }[]).map((r) => r.branch)).toEqual(["feature/x"]);
    }
    expect(
      okBody(
        await api(t.client).get("/repos/:repo*/-/branch/:branch*", {
          params: { repo: t.repo, branch: "feature/x" },
        }),
      ).name,
    ).toBe("feature/x");
  });

  it("a branch whose last segment is 'reviews' is reached with %2F", async () => {
    const t = await team(app);
    await branch(t, "x/reviews");
    const res = await t.client.get(`${t.base}/branch/x%2Freviews`);
    expect(expectStatus(res, 200)).toMatchObject({ name: "x/reviews" });
    const list = await t.client.get(`${t.base}/branch/x%2Freviews/reviews`);
    expect(list.body).toEqual([]);
  });
});
