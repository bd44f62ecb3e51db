import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningServer } from "../../functions/server.ts";
import { findRepoAccess } from "../../shared/access/roles.ts";
import { attemptAutoMerge } from "../../shared/merge/auto-merge.ts";
import { mergeBranch } from "../../shared/merge/merge.ts";
import { api, okBody } from "../support/api.ts";
import { startSecondInstance, startTestApp } from "../support/app.ts";
import { expectError, useFixture, world } from "../support/world.ts";
import { installPolicies, policies, statusOf } from "./fixtures.ts";

const app = useFixture(startTestApp);
// A second instance on the same database: two auto-merge relays see every event.
let second: RunningServer;
beforeAll(async () => {
  second = await startSecondInstance(app);
});
afterAll(() => second?.close());

type Repo = Awaited<ReturnType<typeof gatedRepo>>;

/** A repo with a maintainer who enables, a writer who reviews and a reader, and `rego` on main. */
async function gatedRepo(rego: Record<string, string>) {
  const repo = await world(app).repo({ people: { maint: "maintainer", rev: "writer", reader: "reader" } });
  if (Object.keys(rego).length > 0) await installPolicies(repo, rego);
  return repo;
}

const autoMerge = (repo: Repo, who: string, branch: string, method: "post" | "delete" = "post") => {
  const opts = { params: { repo: repo.repo, branch } };
  const client = api(repo.as(who));
  return method === "post"
    ? client.post("/repos/:repo*/-/branch/:branch*/auto-merge", opts)
    : client.delete("/repos/:repo*/-/branch/:branch*/auto-merge", opts);
};

const branchOf = async (repo: Repo, branch: string) =>
  okBody(
    await api(repo.client).get("/repos/:repo*/-/branch/:branch*", { params: { repo: repo.repo, branch } }),
  );

const eventsOf = (repo: Repo, type: string) =>
  app
    .sql<{ data: Record<string, unknown> }>(
      "SELECT data FROM events WHERE repo = $1 AND type = $2 ORDER BY txid, position",
      [repo.repo, type],
    )
    .then((rows) => rows.map((r) => r.data));

/**
 * Waits until the relay's cursor is past every event of the repo so far: whatever those events
 * could trigger has been attempted (a "nothing happened" that can fail, without sleeping).
 */
async function relayed(repo: Repo) {
  await vi.waitFor(
    async () => {
      const [row] = await app.sql<{ done: boolean }>(
        `SELECT coalesce(bool_and((split_part(c.cursor, '.', 1)::numeric, split_part(c.cursor, '.', 2)::numeric)
                  >= (e.txid::text::numeric, e.position::numeric)), false) AS done
         FROM events e, event_relay_cursors c WHERE c.relay = 'auto-merge' AND e.repo = $1`,
        [repo.repo],
      );
      expect(row?.done).toBe(true);
    },
    { timeout: 10_000, interval: 20 },
  );
}

const review = (repo: Repo, branch: string) =>
  api(repo.as("rev")).post("/repos/:repo*/-/review", {
    params: { repo: repo.repo },
    body: { branch, status: "approved", body: "ok" },
  });

const check = (repo: Repo, branch: string, sequence: number) =>
  api(repo.client).post("/repos/:repo*/-/check", {
    params: { repo: repo.repo },
    body: { branch, check_name: "ci/test", status: "passed", sequence },
  });

const mergedSoon = (repo: Repo, branch: string) =>
  vi.waitFor(async () => expect((await branchOf(repo, branch)).status).toBe("merged"), {
    timeout: 10_000,
    interval: 20,
  });

describe("auto-merge", () => {
  it("merges by itself once the policies pass, once, as the enabler; a new commit needs them again", async () => {
    const repo = await gatedRepo({
      require_review: policies.require_review,
      ci_must_pass: policies.ci_must_pass,
    });
    const maint = repo.people.maint;
    const feat = await repo.branch("feat", { files: { "f.md": "one" } });

    expect((await autoMerge(repo, "maint", "feat")).status).toBe(204);
    const enabled = await branchOf(repo, "feat");
    expect(enabled).toMatchObject({
      auto_merge: true,
      auto_merge_by: maint,
      auto_merge_at: expect.any(String),
    });
    // Enabling again keeps the first enabler and records nothing more.
    expect((await autoMerge(repo, "rev", "feat")).status).toBe(204);
    expect((await branchOf(repo, "feat")).auto_merge_at).toBe(enabled.auto_merge_at);

    expect((await check(repo, "feat", feat.head)).status).toBe(201);
    await relayed(repo); // a passing check alone: still waiting
    expect((await branchOf(repo, "feat")).status).toBe("active");

    const head = await feat.commit({ "f.md": "two" });
    expect((await review(repo, "feat")).status).toBe(201);
    await relayed(repo); // the check was at the old head: waiting, and still enabled
    const waiting = await branchOf(repo, "feat");
    expect([waiting.status, waiting.auto_merge_by]).toEqual(["active", maint]);
    expect(await statusOf(repo, "feat")).toMatchObject({ mergeable: false, auto_merge: true });

    expect((await check(repo, "feat", head)).status).toBe(201);
    await mergedSoon(repo, "feat");
    await relayed(repo);
    const merged = await eventsOf(repo, "com.svc.branch.merged");
    expect(merged).toEqual([
      { repo: repo.repo, branch: "feat", sequence: expect.any(Number), merged_by: maint },
    ]);
    expect((await eventsOf(repo, "com.svc.commit.created")).at(-1)).toMatchObject({
      branch: "main",
      author: maint,
    });
    expect(await eventsOf(repo, "com.svc.branch.auto_merge.enabled")).toEqual([
      { repo: repo.repo, branch: "feat", enabled_by: maint },
    ]);
    // Seeing the same events again (another instance, a replay after a restart) merges nothing more.
    expect(await attemptAutoMerge(app.server.ctx, repo.repo, "feat")).toBe("off");
    expect(await eventsOf(repo, "com.svc.branch.merged")).toHaveLength(1);
    expect(await eventsOf(repo, "com.svc.merge.blocked")).toEqual([]);
  });

  it("a conflict found by an attempt turns it off with an event; a refused attempt too", async () => {
    const repo = await gatedRepo({});
    await repo.commit("main", { "a.md": "base" });
    await repo.branch("clash", { files: { "a.md": "branch" } });
    await repo.commit("main", { "a.md": "main" });
    expect((await autoMerge(repo, "maint", "clash")).status).toBe(204);
    await vi.waitFor(
      async () => expect((await eventsOf(repo, "com.svc.branch.auto_merge.disabled")).length).toBe(1),
      { timeout: 10_000, interval: 20 },
    );
    expect(await eventsOf(repo, "com.svc.branch.auto_merge.disabled")).toEqual([
      {
        repo: repo.repo,
        branch: "clash",
        reason: "conflict",
        message: "'clash' conflicts with main",
        disabled_by: repo.people.maint,
      },
    ]);
    const clash = await branchOf(repo, "clash");
    expect([clash.status, clash.auto_merge, clash.auto_merge_by]).toEqual(["active", false, null]);

    // A writer may enable, but a merge needs a maintainer: the attempt is refused and turns it off.
    await repo.branch("by-writer", { files: { "w.md": "w" } });
    expect((await autoMerge(repo, "rev", "by-writer")).status).toBe(204);
    await vi.waitFor(
      async () => expect((await eventsOf(repo, "com.svc.branch.auto_merge.disabled")).length).toBe(2),
      { timeout: 10_000, interval: 20 },
    );
    expect((await eventsOf(repo, "com.svc.branch.auto_merge.disabled"))[1]).toEqual({
      repo: repo.repo,
      branch: "by-writer",
      reason: "refused",
      message: `FORBIDDEN: ${repo.people.rev} may not merge into main of '${repo.repo}': it needs the maintainer role`,
      disabled_by: repo.people.rev,
    });
    expect((await branchOf(repo, "by-writer")).status).toBe("active");
  });

  it("is turned off by a writer, and refused for main, readers, drafts and merged branches", async () => {
    const repo = await gatedRepo({ require_review: policies.require_review });
    await repo.branch("off", { files: { "o.md": "o" } });
    expect((await autoMerge(repo, "maint", "off")).status).toBe(204);
    expect((await autoMerge(repo, "rev", "off", "delete")).status).toBe(204);
    expect((await branchOf(repo, "off")).auto_merge).toBe(false);
    expect(await eventsOf(repo, "com.svc.branch.auto_merge.disabled")).toEqual([
      {
        repo: repo.repo,
        branch: "off",
        reason: "disabled",
        message: `turned off by ${repo.people.rev}`,
        disabled_by: repo.people.rev,
      },
    ]);
    expect((await review(repo, "off")).status).toBe(201);
    await relayed(repo);
    expect((await branchOf(repo, "off")).status).toBe("active");
    // An attempt that saw auto-merge on before it was turned off does not merge: the merge checks
    // the enable it saw under the branch lock.
    const actor = { identity: repo.people.maint, globalAdmin: false };
    const access = await findRepoAccess(app.server.ctx.pool, repo.repo, actor);
    if (!access) throw new Error("the maintainer has no access");
    const stale = { by: repo.people.maint, at: new Date() };
    await expect(
      mergeBranch(app.server.ctx, actor, access, "off", { autoMergeSeen: stale }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
    expect((await branchOf(repo, "off")).status).toBe("active");

    expectError(await autoMerge(repo, "maint", "main"), 400, "VALIDATION_FAILED");
    expectError(await autoMerge(repo, "reader", "off"), 403, "FORBIDDEN");
    expectError(await autoMerge(repo, "reader", "off", "delete"), 403, "FORBIDDEN");
    await repo.branch("draft", { draft: true });
    expectError(await autoMerge(repo, "maint", "draft"), 409, "BRANCH_DRAFT");
    await repo.branch("done", { files: { "d.md": "d" } });
    expect((await review(repo, "done")).status).toBe(201);
    expect(
      (
        await api(repo.client).post("/repos/:repo*/-/merge", {
          params: { repo: repo.repo },
          body: { branch: "done" },
        })
      ).status,
    ).toBe(200);
    expectError(await autoMerge(repo, "maint", "done"), 409, "BRANCH_NOT_ACTIVE");
    expect(await eventsOf(repo, "com.svc.branch.auto_merge.enabled")).toHaveLength(1);
  });

  // Last: it stops both relays of the file's instances.
  it("a relay that was down when the events happened resumes from its cursor and merges once", async () => {
    const repo = await gatedRepo({ require_review: policies.require_review });
    await repo.branch("later", { files: { "l.md": "l" } });
    await app.server.autoMerge.close();
    await second.close();
    expect((await autoMerge(repo, "maint", "later")).status).toBe(204);
    expect((await review(repo, "later")).status).toBe(201);
    expect((await branchOf(repo, "later")).status).toBe("active"); // no relay runs
    second = await startSecondInstance(app);
    await mergedSoon(repo, "later");
    await relayed(repo);
    expect(await eventsOf(repo, "com.svc.branch.merged")).toEqual([
      { repo: repo.repo, branch: "later", sequence: expect.any(Number), merged_by: repo.people.maint },
    ]);
  });
});
