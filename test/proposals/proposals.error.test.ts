import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import type { Res } from "../support/client.ts";
import {
  commit,
  createBranch,
  expectError,
  expectStatus,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";
import { branchWithProposal, eventData, state, uniqueBranch } from "./fixtures.ts";

const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "hello" });
});

/** Sends a request that must be refused with `status`/`code` and must change nothing. */
async function refused(request: () => Promise<Res>, status: number, code: string): Promise<string> {
  const before = await state(app, fx);
  const msg = expectError(await request(), status, code);
  expect(await state(app, fx)).toEqual(before);
  return msg;
}

const MISSING = "00000000-0000-4000-8000-000000000000";

describe("opening a proposal with bad input", () => {
  let branch: string;
  beforeAll(async () => {
    branch = uniqueBranch();
    await createBranch(fx, branch);
  });

  for (const [label, body, field] of [
    ["no title", { title: undefined }, "body.title"],
    ["an empty title", { title: "" }, "body.title"],
    ["a blank title", { title: "   \t " }, "body.title"],
    ["a title of 201 characters", { title: "t".repeat(201) }, "body.title"],
    ["a title that is not a string", { title: 7 }, "body.title"],
    ["a description of 65537 characters", { description: "d".repeat(65_537) }, "body.description"],
    ["a null description", { description: null }, "body.description"],
    ["no branch", { branch: undefined }, "body.branch"],
    ["a branch with a forbidden name", { branch: "a..b" }, "body.branch"],
    ["a base branch with a forbidden name", { base_branch: "bad name" }, "body.base_branch"],
    ["branch main", { branch: "main" }, "body.branch"],
    ["the branch as its own base", { base_branch: "__same__" }, "body.base_branch"],
  ] as const) {
    it(`refuses ${label} with 400 naming ${field}, and changes nothing`, async () => {
      const req: Record<string, unknown> = { branch, title: "ok", ...body };
      if (req["base_branch"] === "__same__") req["base_branch"] = branch;
      const msg = await refused(() => fx.client.post(`${fx.base}/proposals`, req), 400, "VALIDATION_FAILED");
      expect(msg).toContain(field);
    });
  }

  it("refuses malformed JSON with 400 MALFORMED_JSON", async () => {
    await refused(
      () =>
        fx.client.raw("POST", `${fx.base}/proposals`, {
          body: `{"branch": "${branch}", "title": "x"`,
          headers: { "content-type": "application/json" },
        }),
      400,
      "MALFORMED_JSON",
    );
  });

  it("refuses a branch or base branch that does not exist with 404 BRANCH_NOT_FOUND", async () => {
    expect(
      await refused(
        () =>
          api(fx.client).post("/repos/:repo*/-/proposals", {
            params: { repo: fx.repo },
            body: { branch: "ghost", title: "t" },
          }),
        404,
        "BRANCH_NOT_FOUND",
      ),
    ).toContain("ghost");
    expect(
      await refused(
        () =>
          api(fx.client).post("/repos/:repo*/-/proposals", {
            params: { repo: fx.repo },
            body: { branch, base_branch: "nowhere", title: "t" },
          }),
        404,
        "BRANCH_NOT_FOUND",
      ),
    ).toContain("nowhere");
  });

  it("refuses an abandoned branch or base branch with 409 BRANCH_NOT_ACTIVE", async () => {
    const gone = uniqueBranch("gone");
    await createBranch(fx, gone);
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: gone },
        })
      ).status,
    ).toBe(204);
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/proposals", {
          params: { repo: fx.repo },
          body: { branch: gone, title: "t" },
        }),
      409,
      "BRANCH_NOT_ACTIVE",
    );
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/proposals", {
          params: { repo: fx.repo },
          body: { branch, base_branch: gone, title: "t" },
        }),
      409,
      "BRANCH_NOT_ACTIVE",
    );
  });

  it("answers 404 REPO_NOT_FOUND for an unknown repo", async () => {
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/proposals", {
          params: { repo: `${fx.org}/nope` },
          body: { branch, title: "t" },
        }),
      404,
      "REPO_NOT_FOUND",
    );
  });
});

describe("one open proposal per branch", () => {
  it("refuses a second open proposal with 409 PROPOSAL_EXISTS, whatever its base or title", async () => {
    const base = uniqueBranch("base");
    await createBranch(fx, base);
    const p = await branchWithProposal(fx, "first");
    for (const body of [
      { branch: p.branch, title: "first" },
      { branch: p.branch, title: "another", description: "x" },
      { branch: p.branch, base_branch: base, title: "to another base" },
    ])
      await refused(
        () => api(fx.client).post("/repos/:repo*/-/proposals", { params: { repo: fx.repo }, body }),
        409,
        "PROPOSAL_EXISTS",
      );
    const opened = (await eventData(app, fx, "com.svc.proposal.opened")).filter(
      (d) => (d as { branch: string }).branch === p.branch,
    );
    expect(opened).toHaveLength(1);
  });

  it("two proposals opened at the same moment: exactly one 201 and one 409, one row, one event", async () => {
    for (let round = 0; round < 5; round++) {
      const branch = uniqueBranch("race");
      await createBranch(fx, branch);
      const results = await Promise.all(
        ["left", "right"].map((title) =>
          api(fx.client).post("/repos/:repo*/-/proposals", {
            params: { repo: fx.repo },
            body: { branch, title },
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      expectError(results.find((r) => r.status === 409)!, 409, "PROPOSAL_EXISTS");
      const winner = results.find((r) => r.status === 201)!.body;
      const rows = await app.sql(
        "SELECT p.id, p.title, p.state FROM proposals p JOIN branches b ON b.id = p.branch_id WHERE b.repo_id = $1 AND b.name = $2",
        [fx.repoId, branch],
      );
      expect(rows).toEqual([{ id: winner.id, title: winner.title, state: "open" }]);
      const opened = (await eventData(app, fx, "com.svc.proposal.opened")).filter(
        (d) => (d as { branch: string }).branch === branch,
      );
      expect(opened).toEqual([expect.objectContaining({ proposal_id: winner.id })]);
    }
  });

  it("five at once by different writers: one 201, four 409", async () => {
    const branch = uniqueBranch("race5");
    await createBranch(fx, branch);
    const people = [1, 2, 3, 4, 5].map((i) => `${fx.org}-racer${i}@example.com`);
    for (const p of people)
      expect(
        (
          await api(fx.client).put("/repos/:repo*/-/roles/:identity", {
            params: { repo: fx.repo, identity: p },
            body: { role: "writer" },
          })
        ).status,
      ).toBe(200);
    const results = await Promise.all(
      people.map((p) =>
        api(app.as(p)).post("/repos/:repo*/-/proposals", {
          params: { repo: fx.repo },
          body: { branch, title: p },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const [{ n }] = (await app.sql(
      "SELECT count(*)::int AS n FROM proposals p JOIN branches b ON b.id = p.branch_id WHERE b.repo_id = $1 AND b.name = $2",
      [fx.repoId, branch],
    )) as [{ n: number }];
    expect(n).toBe(1);
  });
});

describe("reading proposals with bad input", () => {
  it("refuses a malformed id with 400 VALIDATION_FAILED naming path.id", async () => {
    for (const id of ["not-a-uuid", "123", `${MISSING}0`, "zzzzzzzz-0000-4000-8000-000000000000"])
      expect(
        expectError(
          await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id } }),
          400,
          "VALIDATION_FAILED",
        ),
      ).toContain("path.id");
  });

  it("answers 404 PROPOSAL_NOT_FOUND for an unknown id, and for another repo's proposal", async () => {
    expectError(
      await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: MISSING } }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    const other = await repoWithOwner(app);
    await createBranch(other, "elsewhere");
    const theirs = expectStatus(
      await api(other.client).post("/repos/:repo*/-/proposals", {
        params: { repo: other.repo },
        body: { branch: "elsewhere", title: "t" },
      }),
      201,
    );
    // The fixture's owner is not on `other`: its repo answers 404 REPO_NOT_FOUND; under its own repo
    // the id is simply not found.
    expectError(
      await api(fx.client).get("/repos/:repo*/-/proposals/:id", {
        params: { repo: fx.repo, id: theirs.id },
      }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    await refused(
      () =>
        api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: theirs.id },
          body: { title: "x" },
        }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: theirs.id },
          body: {},
        }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    expect(
      (
        await api(other.client).get("/repos/:repo*/-/proposals/:id", {
          params: { repo: other.repo, id: theirs.id },
        })
      ).body,
    ).toMatchObject({ state: "open" });
  });

  it("refuses an unknown state or a forbidden branch name in the list query", async () => {
    expect(
      expectError(await fx.client.get(`${fx.base}/proposals?state=draft`), 400, "VALIDATION_FAILED"),
    ).toContain("query.state");
    expect(
      expectError(
        await api(fx.client).get("/repos/:repo*/-/proposals", {
          params: { repo: fx.repo },
          query: { branch: "a..b" },
        }),
        400,
        "VALIDATION_FAILED",
      ),
    ).toContain("query.branch");
  });
});

describe("patching a proposal with bad input", () => {
  for (const [label, body] of [
    ["an empty body", {}],
    ["only unknown fields", { state: "closed", author: "x@y.z" }],
    ["an empty title", { title: "" }],
    ["a blank title", { title: "  " }],
    ["a title of 201 characters", { title: "x".repeat(201) }],
    ["a null title", { title: null }],
    ["a description of 65537 characters", { description: "d".repeat(65_537) }],
  ] as const) {
    it(`refuses ${label} with 400 and changes nothing`, async () => {
      const p = await branchWithProposal(fx);
      await refused(() => fx.client.patch(`${fx.base}/proposals/${p.id}`, body), 400, "VALIDATION_FAILED");
    });
  }

  it("refuses a closed proposal with 409 PROPOSAL_NOT_OPEN", async () => {
    const p = await branchWithProposal(fx);
    expect(
      (
        await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        })
      ).status,
    ).toBe(200);
    await refused(
      () =>
        api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: p.id },
          body: { title: "too late" },
        }),
      409,
      "PROPOSAL_NOT_OPEN",
    );
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body.title,
    ).toBe(p.title);
  });

  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    await refused(
      () =>
        api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: MISSING },
          body: { title: "x" },
        }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    await refused(
      () =>
        api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: "nope" },
          body: { title: "x" },
        }),
      400,
      "VALIDATION_FAILED",
    );
  });
});

describe("closing a proposal that cannot be closed", () => {
  it("refuses a second close with 409 PROPOSAL_NOT_OPEN and records no second event", async () => {
    const p = await branchWithProposal(fx);
    expect(
      (
        await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        })
      ).status,
    ).toBe(200);
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        }),
      409,
      "PROPOSAL_NOT_OPEN",
    );
    const closed = (await eventData(app, fx, "com.svc.proposal.closed")).filter(
      (d) => (d as { proposal_id: string }).proposal_id === p.id,
    );
    expect(closed).toHaveLength(1);
  });

  it("two closes at once: one 200, one 409, one event", async () => {
    const p = await branchWithProposal(fx);
    const results = await Promise.all(
      [1, 2].map(() =>
        api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const closed = (await eventData(app, fx, "com.svc.proposal.closed")).filter(
      (d) => (d as { proposal_id: string }).proposal_id === p.id,
    );
    expect(closed).toHaveLength(1);
  });

  it("answers 404 for an unknown id, 400 for a malformed one, 405 for GET", async () => {
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: MISSING },
          body: {},
        }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    await refused(
      () =>
        api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: "x" },
          body: {},
        }),
      400,
      "VALIDATION_FAILED",
    );
    const res = await fx.client.get(`${fx.base}/proposals/${MISSING}/close`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});
