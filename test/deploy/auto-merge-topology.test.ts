import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api, okBody } from "../support/api.ts";
import { freshDatabase } from "../support/app.ts";
import { policies } from "../support/policies.ts";
import { installPolicies, type RepoHandle, world } from "../support/world.ts";
import { startTopology, type Topology } from "./topology.ts";

/**
 * Auto-merge as terraform/ deploys it (docs/auto-merge.md, "Where it runs"): no process runs the
 * relay; the built `repos`, `orgs` and `autoMerge` functions run with terraform's environment, and
 * the events reach `autoMerge` only as Cloud Tasks tasks (the emulator) made from the outbox rows
 * of the auto-merge system subscription by the committing function itself.
 */

let top: Topology;
beforeAll(async () => {
  top = await startTopology({ databaseUrl: await freshDatabase(), targets: ["repos", "orgs", "autoMerge"] });
}, 300_000);
afterAll(async () => {
  if (process.env["QUIRE_TEST_LOGS"] === "1")
    for (const [target, bundle] of top?.bundles ?? []) console.log(target, bundle.output());
  await top?.close();
});

type Repo = RepoHandle<"maint" | "wri" | "rev">;

/** A repo whose main needs an approval to merge, with a maintainer, a writer and a reviewer. */
async function gatedRepo(): Promise<Repo> {
  const repo = await world(top.app).repo({ people: { maint: "maintainer", wri: "writer", rev: "writer" } });
  await installPolicies(repo, { require_review: policies.require_review });
  return repo;
}

const enable = (repo: Repo, who: "maint" | "wri", branch: string) =>
  api(repo.as(who)).post("/repos/:repo*/-/branch/:branch*/auto-merge", {
    params: { repo: repo.repo, branch },
  });

const approve = (repo: Repo, branch: string) =>
  api(repo.as("rev")).post("/repos/:repo*/-/review", {
    params: { repo: repo.repo },
    body: { branch, status: "approved", body: "ok" },
  });

const branchOf = async (repo: Repo, branch: string) =>
  okBody(
    await api(repo.client).get("/repos/:repo*/-/branch/:branch*", { params: { repo: repo.repo, branch } }),
  );

const eventsOf = async (repo: Repo, type: string) =>
  (
    await top.app.sql<{ data: Record<string, unknown> }>(
      "SELECT data FROM events WHERE repo = $1 AND type = $2 ORDER BY txid, position",
      [repo.repo, type],
    )
  ).map((r) => r.data);

interface AutoMergeRow {
  id: number;
  lease_seq: number;
  attempts: number;
  delivered: boolean;
}

/** The auto-merge subscription's outbox row of the repo's one event of `type`. */
async function autoMergeRow(repo: Repo, type: string): Promise<AutoMergeRow | undefined> {
  const rows = await top.app.sql<AutoMergeRow>(
    `SELECT o.id::int AS id, o.lease_seq::int AS lease_seq, o.attempts, o.delivered_at IS NOT NULL AS delivered
       FROM webhook_outbox o JOIN subscriptions s ON s.id = o.subscription_id JOIN events e ON e.id = o.event_id
      WHERE s.system_name = 'auto-merge' AND e.repo = $1 AND e.type = $2`,
    [repo.repo, type],
  );
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0];
}

/** Waits (no sweep runs: only the committing function's own tasks) until the row is delivered. */
const deliveredSoon = (repo: Repo, type: string) =>
  vi.waitFor(
    async () => {
      const row = await autoMergeRow(repo, type);
      expect(row?.delivered).toBe(true);
      return row as AutoMergeRow;
    },
    { timeout: 20_000, interval: 50 },
  );

const postTask = (body: unknown) =>
  fetch(`${top.bundles.get("autoMerge")?.url}/auto-merge-delivery`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("auto-merge in the deployed form", () => {
  it("subscribes the trigger events to the autoMerge function's internal route", async () => {
    const target = top.envOf("repos")["SVC_AUTO_MERGE_TASKS_TARGET_URL"];
    expect(target).toBe(`${top.bundles.get("autoMerge")?.url}/auto-merge-delivery`);
    // Terraform's own value: the function's run.app URL, as the queue's other target is.
    expect(top.settings.env["repos"]?.["SVC_AUTO_MERGE_TASKS_TARGET_URL"]).toBe(
      `${top.settings.urls["autoMerge"]}/auto-merge-delivery`,
    );
    await gatedRepo(); // a first request: the functions register their subscriptions
    const subs = await top.app.sql<{ url: string; event_types: string[]; secret: string | null }>(
      "SELECT url, event_types, secret FROM subscriptions WHERE system_name = 'auto-merge'",
    );
    expect(subs).toEqual([
      {
        url: target,
        secret: null,
        event_types: expect.arrayContaining(["com.svc.review.submitted", "com.svc.check.reported"]),
      },
    ]);
  });

  it("merges once the approval lands, through one task, as the enabler; a second delivery merges nothing more", async () => {
    const repo = await gatedRepo();
    await repo.branch("feat", { files: { "f.md": "one" } });
    expect((await enable(repo, "maint", "feat")).status).toBe(204);
    await deliveredSoon(repo, "com.svc.branch.auto_merge.enabled"); // waiting for the review
    expect((await branchOf(repo, "feat")).status).toBe("active");

    expect((await approve(repo, "feat")).status).toBe(201);
    const row = await deliveredSoon(repo, "com.svc.review.submitted");
    // One reservation (its task's lease) and the task's claim: one attempt, delivered.
    expect(row).toMatchObject({ attempts: 1, delivered: true });
    expect((await branchOf(repo, "feat")).status).toBe("merged");
    const merged = await eventsOf(repo, "com.svc.branch.merged");
    expect(merged).toEqual([
      { repo: repo.repo, branch: "feat", sequence: expect.any(Number), merged_by: repo.people.maint },
    ]);

    // The same task again (Cloud Tasks delivers at least once): its lease is gone, nothing runs.
    const again = await postTask({ outbox_id: row.id, lease: row.lease_seq - 1 });
    expect(await again.json()).toEqual({ result: "stale" });

    // The same event delivered again, as after a crash between the merge and its record: the row is
    // due once more, the next commit's pump makes its task, and the attempt finds the branch merged.
    const mainCommits = async () =>
      (await eventsOf(repo, "com.svc.commit.created")).filter((c) => c["branch"] === "main").length;
    const before = await mainCommits();
    await top.app.sql(
      "UPDATE webhook_outbox SET delivered_at = NULL, leased_until = NULL, next_attempt_at = '-infinity' WHERE id = $1",
      [row.id],
    );
    await repo.commit("main", { "other.md": "x" });
    await vi.waitFor(
      async () =>
        expect(await autoMergeRow(repo, "com.svc.review.submitted")).toMatchObject({
          attempts: 2,
          delivered: true,
        }),
      { timeout: 20_000, interval: 50 },
    );
    expect(await eventsOf(repo, "com.svc.branch.merged")).toHaveLength(1);
    expect(await mainCommits()).toBe(before + 1); // the commit above, and no second merge commit
    expect(await eventsOf(repo, "com.svc.branch.auto_merge.disabled")).toEqual([]);
  });

  it("retries an attempt that fails unexpectedly after the backoff, and gives it up after 3 tries, still enabled", async () => {
    const repo = await gatedRepo();
    await repo.branch("flaky", { files: { "f.md": "one" } });
    // A failure no rule of Quire's expects, inside the merge's transaction (as a lost database
    // connection would be): the merge of this one branch raises.
    await top.app.sql(`
      CREATE FUNCTION refuse_flaky_merge() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
      CREATE TRIGGER refuse_flaky BEFORE UPDATE OF status ON branches FOR EACH ROW
        WHEN (NEW.name = 'flaky' AND NEW.status = 'merged') EXECUTE FUNCTION refuse_flaky_merge();`);
    try {
      expect((await enable(repo, "maint", "flaky")).status).toBe(204);
      expect((await approve(repo, "flaky")).status).toBe(201);
      // Tried at once, after 1 s and after 2 s (the tasks wait for their schedule), then given up.
      const row = await vi.waitFor(
        async () => {
          const r = await autoMergeRow(repo, "com.svc.review.submitted");
          expect(r?.delivered).toBe(true);
          return r as AutoMergeRow;
        },
        { timeout: 30_000, interval: 100 },
      );
      expect(row.attempts).toBe(3);
      expect(await branchOf(repo, "flaky")).toMatchObject({ status: "active", auto_merge: true });
      expect(await eventsOf(repo, "com.svc.branch.auto_merge.disabled")).toEqual([]);
      const [sub] = await top.app.sql<{ suspended: boolean }>(
        "SELECT suspended_at IS NOT NULL AS suspended FROM subscriptions WHERE system_name = 'auto-merge'",
      );
      expect(sub).toEqual({ suspended: false });
    } finally {
      await top.app.sql("DROP TRIGGER refuse_flaky ON branches; DROP FUNCTION refuse_flaky_merge()");
    }
  });

  it("turns auto-merge off with an event when the merge is refused (the enabler is not a maintainer)", async () => {
    const repo = await gatedRepo();
    await repo.branch("wip", { files: { "w.md": "one" } });
    expect((await enable(repo, "wri", "wip")).status).toBe(204);
    expect((await approve(repo, "wip")).status).toBe(201);
    await deliveredSoon(repo, "com.svc.review.submitted");
    expect(await eventsOf(repo, "com.svc.branch.auto_merge.disabled")).toEqual([
      {
        repo: repo.repo,
        branch: "wip",
        reason: "refused",
        message: expect.stringMatching(/^FORBIDDEN: /),
        disabled_by: repo.people.wri,
      },
    ]);
    expect(await branchOf(repo, "wip")).toMatchObject({ status: "active", auto_merge: false });
    expect(await eventsOf(repo, "com.svc.branch.merged")).toEqual([]);
  });
});
