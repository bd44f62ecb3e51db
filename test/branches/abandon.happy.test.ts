import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { createBranch, repoWithOwner, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

describe("abandoning a branch", () => {
  it("closes its open proposal in the same transaction, recording proposal.closed", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "dropped");
    const opened = await fx.client.post(`${fx.base}/proposals`, {
      branch: "dropped",
      base_branch: "main",
      title: "Never mind",
    });
    expect((await fx.client.delete(`${fx.base}/branch/dropped`)).status).toBe(204);
    expect((await fx.client.get(`${fx.base}/proposals/${opened.body.id}`)).body.state).toBe("closed");
    const events = await app.sql<{ type: string }>(
      "SELECT type FROM events WHERE repo = $1 ORDER BY position",
      [fx.repo],
    );
    expect(events.map((e) => e.type).slice(-2)).toEqual([
      "com.svc.proposal.closed",
      "com.svc.branch.abandoned",
    ]);
  });
});
