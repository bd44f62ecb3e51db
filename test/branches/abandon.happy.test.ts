import { describe, expect, it } from "vitest";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { createBranch, repoWithOwner, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

describe("abandoning a branch", () => {
  it("closes its open proposal in the same transaction, recording proposal.closed", async () => {
    const fx = await repoWithOwner(app);
    await createBranch(fx, "dropped");
    const opened = okBody(
      await api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: {
          branch: "dropped",
          base_branch: "main",
          title: "Never mind",
        },
      }),
    );
    expect(
      (
        await api(fx.client).delete("/repos/:repo*/-/branch/:branch*", {
          params: { repo: fx.repo, branch: "dropped" },
        })
      ).status,
    ).toBe(204);
    expect(
      okBody(
        await api(fx.client).get("/repos/:repo*/-/proposals/:id", {
          params: { repo: fx.repo, id: opened.id },
        }),
      ).state,
    ).toBe("closed");
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
