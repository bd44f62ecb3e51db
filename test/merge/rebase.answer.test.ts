import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commit, createBranch, repoWithOwner } from "../commits/fixtures.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { expectOk } from "../support/world.ts";
import { branchOf, rebase } from "./fixtures.ts";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/**
 * The rebase answer also carries the branch's `base_sequence` and `head_sequence` after the
 * rebase, named as in the branch record, which the spec's origin clients read (docs/merge.md).
 */
describe("the answer of a rebase", () => {
  it("carries base_sequence and head_sequence equal to the branch's after the rebase", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "topic");
    await commit(fx, "topic", { "t.md": "t" });
    const mainHead = await commit(fx, "main", { "m.md": "m" });

    const res = await rebase(fx, "topic");
    expectOk(res, 200);
    const branch = await branchOf(fx, "topic");
    expect(res.body).toEqual({
      branch: "topic",
      new_base_sequence: mainHead,
      new_head_sequence: mainHead + 1,
      commits_replayed: 1,
      base_sequence: branch.base_sequence,
      head_sequence: branch.head_sequence,
    });
    expect([branch.base_sequence, branch.head_sequence]).toEqual([mainHead, mainHead + 1]);
  });

  it("carries them when there was nothing to do, and keeps them out of the branch.rebased event", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "idle");
    const head = await branchOf(fx, "idle");
    const res = await rebase(fx, "idle");
    expect(res.body).toMatchObject({ base_sequence: head.base_sequence, head_sequence: head.head_sequence });

    await commit(fx, "main", { "m.md": "m" });
    expect((await rebase(fx, "idle")).status).toBe(200);
    const events = await app.sql<{ data: Record<string, unknown> }>(
      "SELECT data FROM events WHERE repo = $1 AND type = 'com.svc.branch.rebased'",
      [fx.repo],
    );
    for (const { data } of events) {
      expect(data).not.toHaveProperty("base_sequence");
      expect(data).not.toHaveProperty("head_sequence");
    }
    expect(events.length).toBeGreaterThan(0);
  });
});
