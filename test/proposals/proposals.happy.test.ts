import { beforeAll, describe, expect, it } from "vitest";
import { type ApiRes, api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, expectError, expectOk, repoWithOwner, useFixture } from "../support/world.ts";
import { eventData, grant, open, proposalKeys, UUID, uniqueBranch } from "./fixtures.ts";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "hello" });
});

const ids = (res: ApiRes<{ proposals: { id: string }[] }>) => okBody(res).proposals.map((p) => p.id);

describe("opening a proposal", () => {
  it("answers 201 with the whole record: open, base main by default, the caller as author", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const res = await api(fx.client).post("/repos/:repo*/-/proposals", {
      params: { repo: fx.repo },
      body: { branch, title: "Add the intro" },
    });
    expectOk(res, 201);
    expect(Object.keys(res.body).sort()).toEqual(proposalKeys);
    expect(res.body).toMatchObject({
      repo: fx.repo,
      branch,
      base_branch: "main",
      title: "Add the intro",
      description: "",
      author: fx.owner,
      state: "open",
    });
    expect(res.body.id).toMatch(UUID);
    expect(Number.isNaN(Date.parse(res.body.created_at))).toBe(false);
    expect(res.body.updated_at).toBe(res.body.created_at);
    expect(
      (
        await api(fx.client).get("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: res.body.id },
        })
      ).body,
    ).toEqual(res.body);
  });

  it("keeps the description and an explicit base branch", async () => {
    const base = uniqueBranch("base");
    const branch = uniqueBranch();
    await createBranch(fx, base);
    await createBranch(fx, branch);
    const p = await open(fx, { branch, base_branch: base, title: "t", description: "## Why\n\nBecause." });
    expect(p).toMatchObject({ branch, base_branch: base, description: "## Why\n\nBecause." });
  });

  it("records com.svc.proposal.opened once, with the branch head as sequence", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const head = await commit(fx, branch, { "b.md": "on the branch" });
    const p = await open(fx, { branch, title: "evented" });
    const events = (await eventData(app, fx, "com.svc.proposal.opened")).filter(
      (d) => (d as { proposal_id: string }).proposal_id === p.id,
    );
    expect(events).toEqual([
      { repo: fx.repo, branch, base_branch: "main", proposal_id: p.id, author: fx.owner, sequence: head },
    ]);
    const [row] = await app.sql("SELECT source, type FROM events WHERE data->>'proposal_id' = $1", [p.id]);
    expect(row).toEqual({ source: `/repos/${fx.repo}`, type: "com.svc.proposal.opened" });
  });

  it("lets a writer open one, as its author; a draft branch may have one", async () => {
    const writer = `${fx.org}-writer@example.com`;
    await grant(fx, writer, "writer");
    const branch = uniqueBranch("draft");
    await createBranch(fx, branch, true);
    const p = await open(fx, { branch, title: "draft work" }, app.as(writer));
    expect(p).toMatchObject({ author: writer, state: "open", branch });
  });

  it("refuses an author or state sent in the body, naming them: the author is always the caller", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const forged = await fx.client.post(`${fx.base}/proposals`, {
      branch,
      title: "t",
      author: "someone@else.test",
      state: "merged",
    });
    expect(expectError(forged, 400, "VALIDATION_FAILED")).toBe(
      "body.author: unknown field; body.state: unknown field",
    );
    const p = await open(fx, { branch, title: "t" });
    expect(p).toMatchObject({ author: fx.owner, state: "open" });
  });

  it("accepts a title of exactly 200 characters and a description of exactly 65536", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "t".repeat(200), description: "d".repeat(65_536) });
    expect(p.title).toHaveLength(200);
    expect(p.description).toHaveLength(65_536);
  });

  it("opens a new proposal on a branch whose earlier one was closed", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const first = await open(fx, { branch, title: "first" });
    expect(
      (
        await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: first.id },
          body: {},
        })
      ).status,
    ).toBe(200);
    const second = await open(fx, { branch, title: "second" });
    expect(second.id).not.toBe(first.id);
    expect(
      (
        await api(fx.client).get("/repos/:repo*/-/proposals", {
          params: { repo: fx.repo },
          query: { branch },
        })
      ).body.proposals,
    ).toMatchObject([
      { id: second.id, state: "open" },
      { id: first.id, state: "closed" },
    ]);
  });
});

describe("a proposal's number", () => {
  it("counts 1, 2, 3… per repo (a new repo from 1), without gaps from refusals or races", async () => {
    const own = await repoWithOwner(app);
    const branches = ["n-a", "n-b", "n-c", "n-d"];
    for (const b of branches) await createBranch(own, b);
    const first = await open(own, { branch: "n-a", title: "first" });
    expect(first.number).toBe(1);
    // A refused opening (the branch already has one) takes no number.
    expect(
      (
        await api(own.client).post("/repos/:repo*/-/proposals", {
          params: { repo: own.repo },
          body: { branch: "n-a", title: "again" },
        })
      ).status,
    ).toBe(409);
    const racing = await Promise.all(branches.slice(1).map((branch) => open(own, { branch, title: branch })));
    expect(racing.map((p) => p.number).sort()).toEqual([2, 3, 4]);
    // Every list and read carries the number beside the id.
    const listed = okBody(
      await api(own.client).get("/repos/:repo*/-/proposals", { params: { repo: own.repo } }),
    );
    expect(listed.proposals.map((p) => p.number).sort()).toEqual([1, 2, 3, 4]);
    const got = okBody(
      await api(own.client).get("/repos/:repo*/-/proposals/:id", {
        params: { repo: own.repo, id: first.id },
      }),
    );
    expect(got).toMatchObject({ id: first.id, number: 1 });
  });
});

describe("listing proposals", () => {
  it("lists every state newest first, and filters by state, by branch and by both", async () => {
    const own = await repoWithOwner(app);
    const [b1, b2] = [uniqueBranch(), uniqueBranch()];
    await createBranch(own, b1);
    await createBranch(own, b2);
    const p1 = await open(own, { branch: b1, title: "one" });
    expect(
      (
        await api(own.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: own.repo, id: p1.id },
          body: {},
        })
      ).status,
    ).toBe(200);
    const p2 = await open(own, { branch: b1, title: "two" });
    const p3 = await open(own, { branch: b2, title: "three" });

    const all = await api(own.client).get("/repos/:repo*/-/proposals", { params: { repo: own.repo } });
    expectOk(all, 200);
    expect(Object.keys(all.body)).toEqual(["proposals"]);
    expect(ids(all)).toEqual([p3.id, p2.id, p1.id]);
    for (const p of all.body.proposals) expect(Object.keys(p).sort()).toEqual(proposalKeys);

    expect(
      ids(
        await api(own.client).get("/repos/:repo*/-/proposals", {
          params: { repo: own.repo },
          query: { state: "open" },
        }),
      ),
    ).toEqual([p3.id, p2.id]);
    expect(
      ids(
        await api(own.client).get("/repos/:repo*/-/proposals", {
          params: { repo: own.repo },
          query: { state: "closed" },
        }),
      ),
    ).toEqual([p1.id]);
    expect(
      ids(
        await api(own.client).get("/repos/:repo*/-/proposals", {
          params: { repo: own.repo },
          query: { state: "merged" },
        }),
      ),
    ).toEqual([]);
    expect(
      ids(
        await api(own.client).get("/repos/:repo*/-/proposals", {
          params: { repo: own.repo },
          query: { branch: b1 },
        }),
      ),
    ).toEqual([p2.id, p1.id]);
    expect(
      ids(
        await api(own.client).get("/repos/:repo*/-/proposals", {
          params: { repo: own.repo },
          query: { branch: b1, state: "open" },
        }),
      ),
    ).toEqual([p2.id]);
    expect(
      ids(
        await api(own.client).get("/repos/:repo*/-/proposals", {
          params: { repo: own.repo },
          query: { branch: "nobody-has-this" },
        }),
      ),
    ).toEqual([]);
  });

  it("lists only the repo's own proposals", async () => {
    const other = await repoWithOwner(app);
    expect(
      okBody(await api(other.client).get("/repos/:repo*/-/proposals", { params: { repo: other.repo } })),
    ).toEqual({ proposals: [] });
  });

  it("filters by a branch name that contains '/'", async () => {
    const branch = `feature/${uniqueBranch()}`;
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "nested" });
    expect(
      ids(
        await api(fx.client).get("/repos/:repo*/-/proposals", {
          params: { repo: fx.repo },
          query: { branch },
        }),
      ),
    ).toEqual([p.id]);
  });
});

describe("patching a proposal", () => {
  it("changes the title only, the description only, or both, and bumps updated_at", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "old", description: "old text" });

    const t = await api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
      params: { repo: fx.repo, id: p.id },
      body: { title: "new" },
    });
    expectOk(t, 200);
    expect(Object.keys(t.body).sort()).toEqual(proposalKeys);
    expect(t.body).toMatchObject({ id: p.id, title: "new", description: "old text", state: "open" });
    expect(t.body.created_at).toBe(p.created_at);
    expect(Date.parse(t.body.updated_at)).toBeGreaterThan(Date.parse(p.updated_at));

    const d = await api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
      params: { repo: fx.repo, id: p.id },
      body: { description: "" },
    });
    expectOk(d, 200);
    expect(d.body).toMatchObject({ title: "new", description: "" });
    expect(Date.parse(d.body.updated_at)).toBeGreaterThan(Date.parse(t.body.updated_at));

    const both = await api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
      params: { repo: fx.repo, id: p.id },
      body: { title: "T", description: "D" },
    });
    expect(both.body).toMatchObject({ title: "T", description: "D", author: fx.owner, branch });
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body,
    ).toEqual(both.body);
  });

  it("records no event", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "quiet" });
    const [before] = await app.sql("SELECT count(*)::int AS n FROM events WHERE repo = $1", [fx.repo]);
    expect(
      (
        await api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: p.id },
          body: { title: "still quiet" },
        })
      ).status,
    ).toBe(200);
    expect(await app.sql("SELECT count(*)::int AS n FROM events WHERE repo = $1", [fx.repo])).toEqual([
      before,
    ]);
  });
});

describe("closing a proposal", () => {
  it("answers 200 with the closed record and records com.svc.proposal.closed once", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "to close" });
    const res = await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
      params: { repo: fx.repo, id: p.id },
      body: {},
    });
    expectOk(res, 200);
    expect(Object.keys(res.body).sort()).toEqual(proposalKeys);
    expect(res.body).toMatchObject({ id: p.id, state: "closed", title: "to close", author: fx.owner });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(p.updated_at));
    const closed = (await eventData(app, fx, "com.svc.proposal.closed")).filter(
      (d) => (d as { proposal_id: string }).proposal_id === p.id,
    );
    expect(closed).toEqual([{ repo: fx.repo, branch, proposal_id: p.id }]);
    // The branch itself is untouched.
    expect(
      (await api(fx.client).get("/repos/:repo*/-/branch/:branch*", { params: { repo: fx.repo, branch } }))
        .body.status,
    ).toBe("active");
  });
});

describe("a proposal id", () => {
  it("is accepted in upper case too", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "case" });
    const res = await api(fx.client).get("/repos/:repo*/-/proposals/:id", {
      params: { repo: fx.repo, id: p.id.toUpperCase() },
    });
    expectOk(res, 200);
    expect(res.body.id).toBe(p.id);
  });
});
