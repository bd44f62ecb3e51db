import { beforeAll, describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import type { Client, Res } from "../support/client.ts";
import { commit, createBranch, expectError, expectOk, repoWithOwner, useFixture } from "../support/world.ts";
import { branchWithProposal, grant, open, state, uniqueBranch } from "./fixtures.ts";

const who = (role: string) => `${role}@people.test`;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "hello" });
  for (const role of ["reader", "writer", "maintainer"] as const) await grant(fx, who(role), role);
  await grant(fx, who("author"), "writer");
});

async function refused(request: () => Promise<Res>, status: number, code: string) {
  const before = await state(app, fx);
  expectError(await request(), status, code);
  expect(await state(app, fx)).toEqual(before);
}

/** Every proposal request, against proposal `id` on branch `branch`. */
const requests = (c: Client, id: string, branch: string) => [
  () => api(c).post("/repos/:repo*/-/proposals", { params: { repo: fx.repo }, body: { branch, title: "t" } }),
  () => api(c).get("/repos/:repo*/-/proposals", { params: { repo: fx.repo } }),
  () => api(c).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id } }),
  () =>
    api(c).patch("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id }, body: { title: "x" } }),
  () => api(c).post("/repos/:repo*/-/proposals/:id/close", { params: { repo: fx.repo, id }, body: {} }),
];

describe("callers who may not see the repo", () => {
  it("anonymous: 401 UNAUTHENTICATED on every proposal endpoint, nothing changes", async () => {
    const p = await branchWithProposal(fx);
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    for (const r of requests(app.anonymous, p.id, branch)) await refused(r, 401, "UNAUTHENTICATED");
  });

  it("a stranger: 404 REPO_NOT_FOUND on every proposal endpoint, as if the repo did not exist", async () => {
    const p = await branchWithProposal(fx);
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    for (const r of requests(app.as("stranger@people.test"), p.id, branch))
      await refused(r, 404, "REPO_NOT_FOUND");
  });
});

describe("a reader", () => {
  it("lists and reads proposals but may not open, patch or close one (403)", async () => {
    const p = await branchWithProposal(fx);
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const reader = app.as(who("reader"));
    expect((await api(reader).get("/repos/:repo*/-/proposals", { params: { repo: fx.repo } })).status).toBe(
      200,
    );
    expect(
      okBody(await api(reader).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } })),
    ).toEqual(p);
    await refused(
      () =>
        api(reader).post("/repos/:repo*/-/proposals", {
          params: { repo: fx.repo },
          body: { branch, title: "t" },
        }),
      403,
      "FORBIDDEN",
    );
    await refused(
      () =>
        api(reader).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: p.id },
          body: { title: "x" },
        }),
      403,
      "FORBIDDEN",
    );
    await refused(
      () =>
        api(reader).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        }),
      403,
      "FORBIDDEN",
    );
  });

  it("an org member (a reader through the org) reads proposals", async () => {
    const member = "member@people.test";
    expect(
      (
        await api(fx.client).post("/orgs/:org/members/:identity", {
          params: { org: fx.org, identity: member },
          body: { role: "member" },
        })
      ).status,
    ).toBe(201);
    const p = await branchWithProposal(fx);
    expect(
      (
        await api(app.as(member)).get("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: p.id },
        })
      ).status,
    ).toBe(200);
    await refused(
      () =>
        api(app.as(member)).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        }),
      403,
      "FORBIDDEN",
    );
  });
});

describe("author or maintainer", () => {
  it("a writer who is not the author may neither patch nor close (403), and nothing changes", async () => {
    const p = await branchWithProposal(fx);
    const writer = app.as(who("writer"));
    await refused(
      () =>
        api(writer).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: p.id },
          body: { title: "mine now" },
        }),
      403,
      "FORBIDDEN",
    );
    await refused(
      () =>
        api(writer).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        }),
      403,
      "FORBIDDEN",
    );
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body,
    ).toEqual(p);
  });

  it("the author (a writer) patches and closes their own proposal", async () => {
    const author = app.as(who("author"));
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "mine" }, author);
    expect(p.author).toBe(who("author"));
    const patched = await api(author).patch("/repos/:repo*/-/proposals/:id", {
      params: { repo: fx.repo, id: p.id },
      body: { description: "details" },
    });
    expectOk(patched, 200);
    expect(patched.body.description).toBe("details");
    const closed = await api(author).post("/repos/:repo*/-/proposals/:id/close", {
      params: { repo: fx.repo, id: p.id },
      body: {},
    });
    expectOk(closed, 200);
    expect(closed.body.state).toBe("closed");
  });

  it("a maintainer who is not the author patches and closes it", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "by the author" }, app.as(who("author")));
    const maintainer = app.as(who("maintainer"));
    const patched = await api(maintainer).patch("/repos/:repo*/-/proposals/:id", {
      params: { repo: fx.repo, id: p.id },
      body: {
        title: "edited by a maintainer",
      },
    });
    expectOk(patched, 200);
    expect(patched.body).toMatchObject({ title: "edited by a maintainer", author: who("author") });
    const closed = await api(maintainer).post("/repos/:repo*/-/proposals/:id/close", {
      params: { repo: fx.repo, id: p.id },
      body: {},
    });
    expectOk(closed, 200);
    expect(closed.body).toMatchObject({ state: "closed", author: who("author") });
  });

  it("an admin (the org owner) and a global admin close proposals they did not open", async () => {
    const a = await open(
      fx,
      { branch: (await createBranch(fx, uniqueBranch())).name, title: "a" },
      app.as(who("author")),
    );
    expect(
      (
        await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: a.id },
          body: {},
        })
      ).status,
    ).toBe(200);
    const b = await open(
      fx,
      { branch: (await createBranch(fx, uniqueBranch())).name, title: "b" },
      app.as(who("author")),
    );
    expect(
      (
        await api(app.as("admin@quire.test")).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: b.id },
          body: {},
        })
      ).status,
    ).toBe(200);
  });

  it("an author demoted to reader may no longer change their proposal", async () => {
    const demoted = "demoted@people.test";
    await grant(fx, demoted, "writer");
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "before" }, app.as(demoted));
    await grant(fx, demoted, "reader");
    await refused(
      () =>
        api(app.as(demoted)).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: p.id },
          body: { title: "after" },
        }),
      403,
      "FORBIDDEN",
    );
    await refused(
      () =>
        api(app.as(demoted)).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        }),
      403,
      "FORBIDDEN",
    );
  });

  it("identities compare case-insensitively: the author signed in with upper case is still the author", async () => {
    const branch = uniqueBranch();
    await createBranch(fx, branch);
    const p = await open(fx, { branch, title: "case" }, app.as(who("author")));
    const res = await api(app.as(who("author").toUpperCase())).post("/repos/:repo*/-/proposals/:id/close", {
      params: { repo: fx.repo, id: p.id },
      body: {},
    });
    expectOk(res, 200);
  });
});

describe("a proposal id from another repo", () => {
  it("cannot be reached through a repo the caller administers", async () => {
    const mine = await repoWithOwner(app);
    const p = await branchWithProposal(fx);
    await refused(
      () =>
        api(mine.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: mine.repo, id: p.id },
          body: {},
        }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    await refused(
      () =>
        api(mine.client).patch("/repos/:repo*/-/proposals/:id", {
          params: { repo: mine.repo, id: p.id },
          body: { title: "x" },
        }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
    expectError(
      await api(mine.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: mine.repo, id: p.id } }),
      404,
      "PROPOSAL_NOT_FOUND",
    );
  });
});
