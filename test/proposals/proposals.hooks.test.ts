import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rollback, withTx } from "../../shared/db/tx.ts";
import {
  closeOpenProposalOnAbandon,
  markOpenProposalMerged,
  openProposalOf,
  type ProposalRecord,
} from "../../shared/proposals/proposals.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, expectError, expectOk, repoWithOwner, useFixture } from "../support/world.ts";
import { branchWithProposal, eventData, proposalKeys, uniqueBranch } from "./fixtures.ts";

/**
 * The functions the merge and the branch abandon call inside their own transactions, called here
 * directly on the app's database; and the one-open-per-branch rule under a transaction held open.
 */

let pool: pg.Pool;
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "hello" });
  pool = new pg.Pool({ connectionString: app.databaseUrl, max: 3 });
});
afterAll(async () => {
  await pool.end();
});

const repo = () => ({ id: fx.repoId, name: fx.repo });
async function branchRow(name: string) {
  const [row] = await app.sql<{ id: number; name: string }>(
    "SELECT id, name FROM branches WHERE repo_id = $1 AND name = $2",
    [fx.repoId, name],
  );
  return { id: Number(row!.id), name: row!.name };
}
const eventsFor = async (type: string, id: string) =>
  (await eventData(app, fx, type)).filter((d) => (d as { proposal_id: string }).proposal_id === id);

describe("openProposalOf", () => {
  it("is null without a proposal, the record while one is open, null again once it is closed", async () => {
    const name = uniqueBranch();
    await createBranch(fx, name);
    const branch = await branchRow(name);
    expect(await openProposalOf(pool, branch.id)).toBeNull();
    const p = okBody(
      await api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: name, title: "policy input" },
      }),
    );
    const found = await openProposalOf(pool, branch.id);
    expect(Object.keys(found!).sort()).toEqual(proposalKeys);
    expect(JSON.parse(JSON.stringify(found))).toEqual(p);
    expect(
      (
        await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        })
      ).status,
    ).toBe(200);
    expect(await openProposalOf(pool, branch.id)).toBeNull();
  });
});

describe("markOpenProposalMerged", () => {
  it("moves the open proposal to merged and records com.svc.proposal.merged once, in the caller's transaction", async () => {
    const p = await branchWithProposal(fx, "to merge");
    const branch = await branchRow(p.branch);
    const merged = await withTx(pool, (tx) => markOpenProposalMerged(tx, repo(), branch));
    expect(merged).toMatchObject({ id: p.id, state: "merged", branch: p.branch, repo: fx.repo });
    expect(merged!.updated_at.getTime()).toBeGreaterThan(Date.parse(p.updated_at));
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body.state,
    ).toBe("merged");
    expect(await eventsFor("com.svc.proposal.merged", p.id)).toEqual([
      { repo: fx.repo, branch: p.branch, base_branch: "main", proposal_id: p.id },
    ]);
    expect(await eventsFor("com.svc.proposal.closed", p.id)).toEqual([]);
    // Merged is final: no patch, no close.
    expectError(
      await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
        params: { repo: fx.repo, id: p.id },
        body: {},
      }),
      409,
      "PROPOSAL_NOT_OPEN",
    );
    expectError(
      await api(fx.client).patch("/repos/:repo*/-/proposals/:id", {
        params: { repo: fx.repo, id: p.id },
        body: { title: "x" },
      }),
      409,
      "PROPOSAL_NOT_OPEN",
    );
    // A second call finds nothing open and records nothing.
    expect(await withTx(pool, (tx) => markOpenProposalMerged(tx, repo(), branch))).toBeNull();
    expect(await eventsFor("com.svc.proposal.merged", p.id)).toHaveLength(1);
  });

  it("is null and records nothing for a branch without an open proposal; a closed one stays closed", async () => {
    const p = await branchWithProposal(fx);
    expect(
      (
        await api(fx.client).post("/repos/:repo*/-/proposals/:id/close", {
          params: { repo: fx.repo, id: p.id },
          body: {},
        })
      ).status,
    ).toBe(200);
    const [before] = await app.sql("SELECT count(*)::int AS n FROM events WHERE repo = $1", [fx.repo]);
    const branch = await branchRow(p.branch);
    expect(await withTx(pool, (tx) => markOpenProposalMerged(tx, repo(), branch))).toBeNull();
    expect(await app.sql("SELECT count(*)::int AS n FROM events WHERE repo = $1", [fx.repo])).toEqual([
      before,
    ]);
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body.state,
    ).toBe("closed");
  });

  it("leaves no trace when the merge transaction rolls back", async () => {
    const p = await branchWithProposal(fx);
    const branch = await branchRow(p.branch);
    const inside = await withTx<ProposalRecord | null>(pool, async (tx) => {
      const r = await markOpenProposalMerged(tx, repo(), branch);
      throw new Rollback(r);
    });
    expect(inside!.state).toBe("merged");
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body,
    ).toEqual(p);
    expect(await eventsFor("com.svc.proposal.merged", p.id)).toEqual([]);
  });

  it("touches only that branch's proposal", async () => {
    const a = await branchWithProposal(fx);
    const b = await branchWithProposal(fx);
    await withTx(pool, async (tx) => markOpenProposalMerged(tx, repo(), await branchRow(a.branch)));
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: b.id } }))
        .body,
    ).toEqual(b);
  });
});

describe("closeOpenProposalOnAbandon", () => {
  it("closes the open proposal and records com.svc.proposal.closed once", async () => {
    const p = await branchWithProposal(fx, "abandoned soon");
    const branch = await branchRow(p.branch);
    const closed = await withTx(pool, (tx) => closeOpenProposalOnAbandon(tx, repo(), branch));
    expect(closed).toMatchObject({ id: p.id, state: "closed" });
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body.state,
    ).toBe("closed");
    expect(await eventsFor("com.svc.proposal.closed", p.id)).toEqual([
      { repo: fx.repo, branch: p.branch, proposal_id: p.id },
    ]);
    expect(await withTx(pool, (tx) => closeOpenProposalOnAbandon(tx, repo(), branch))).toBeNull();
    expect(await eventsFor("com.svc.proposal.closed", p.id)).toHaveLength(1);
  });

  it("is null and records nothing for a branch without a proposal, and rolls back with its caller", async () => {
    const name = uniqueBranch();
    await createBranch(fx, name);
    const [before] = await app.sql("SELECT count(*)::int AS n FROM events WHERE repo = $1", [fx.repo]);
    expect(
      await withTx(pool, async (tx) => closeOpenProposalOnAbandon(tx, repo(), await branchRow(name))),
    ).toBeNull();
    expect(await app.sql("SELECT count(*)::int AS n FROM events WHERE repo = $1", [fx.repo])).toEqual([
      before,
    ]);

    const p = await branchWithProposal(fx);
    const branch = await branchRow(p.branch);
    await withTx(pool, async (tx) => {
      await closeOpenProposalOnAbandon(tx, repo(), branch);
      throw new Rollback(null);
    });
    expect(
      (await api(fx.client).get("/repos/:repo*/-/proposals/:id", { params: { repo: fx.repo, id: p.id } }))
        .body.state,
    ).toBe("open");
    expect(await eventsFor("com.svc.proposal.closed", p.id)).toEqual([]);
  });
});

describe("one open proposal per branch, against a transaction still in flight", () => {
  /** Inserts an open proposal for `branch` in a transaction it leaves open; returns its client. */
  async function heldInsert(branch: { id: number }) {
    const client = await pool.connect();
    await client.query("BEGIN");
    await client.query(
      // A number far above the repo's counter, so only the one-open-per-branch rule can collide.
      "INSERT INTO proposals (id, repo_id, branch_id, base_branch, title, author, number) VALUES ($1, $2, $3, 'main', 'held', 'x@y.z', 1000000 + $3::bigint)",
      [randomUUID(), fx.repoId, branch.id],
    );
    return client;
  }

  it("a request racing an uncommitted open proposal waits, then answers 409 when it commits", async () => {
    const name = uniqueBranch("held");
    await createBranch(fx, name);
    const client = await heldInsert(await branchRow(name));
    try {
      const pending = api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: name, title: "racing" },
      });
      await new Promise((r) => setTimeout(r, 300));
      await client.query("COMMIT");
      expectError(await pending, 409, "PROPOSAL_EXISTS");
    } finally {
      client.release();
    }
    const opened = (await eventData(app, fx, "com.svc.proposal.opened")).filter(
      (d) => (d as { branch: string }).branch === name,
    );
    expect(opened).toEqual([]);
  });

  it("... and answers 201 when the other transaction rolls back", async () => {
    const name = uniqueBranch("held");
    await createBranch(fx, name);
    const client = await heldInsert(await branchRow(name));
    try {
      const pending = api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: name, title: "racing" },
      });
      await new Promise((r) => setTimeout(r, 300));
      await client.query("ROLLBACK");
      const res = await pending;
      expectOk(res, 201);
      expect(res.body.title).toBe("racing");
    } finally {
      client.release();
    }
  });
});
