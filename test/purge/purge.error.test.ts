import { describe, expect, it } from "vitest";
import { snapshot } from "../commits/fixtures.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { commit, createBranch, errorOf, expectOk, repoWithOwner, useFixture } from "../support/world.ts";

const app = useFixture(startTestApp);

describe("purge refusals", () => {
  it.each(["", "30", "d30", "-5h", "1w", "5 h", "0h", "0d0h", "abc", "200000d"])(
    "refuses older_than %j with 400 and changes nothing",
    async (older_than) => {
      const fx = await repoWithOwner(app);
      await createBranch(fx, "b");
      await commit(fx, "b", { "a.md": "a" });
      await app.sql(
        "UPDATE branches SET status = 'abandoned', updated_at = now() - interval '900 days' WHERE repo_id = $1 AND name = 'b'",
        [fx.repoId],
      );
      const before = await snapshot(app, fx);
      const res = await api(fx.client).post("/repos/:repo*/-/purge", {
        params: { repo: fx.repo },
        body: { older_than },
      });
      expect(res.status).toBe(400);
      expect(["INVALID_DURATION", "VALIDATION_FAILED"]).toContain(errorOf(res).code);
      expect(errorOf(res).error).toContain("body.older_than");
      expect(await snapshot(app, fx)).toEqual(before);
    },
  );

  it("accepts compound durations such as 1h30m", async () => {
    const fx = await repoWithOwner(app);
    const res = await api(fx.client).post("/repos/:repo*/-/purge", {
      params: { repo: fx.repo },
      body: { older_than: "1h30m" },
    });
    expectOk(res, 200);
    expect(new Date(res.body.cutoff).getTime()).toBeLessThan(Date.now() - 89 * 60_000);
  });

  it("needs the admin role", async () => {
    const fx = await repoWithOwner(app);
    await api(fx.client).put("/repos/:repo*/-/roles/:identity", {
      params: { repo: fx.repo, identity: "maint@example.com" },
      body: { role: "maintainer" },
    });
    const res = await api(app.as("maint@example.com")).post("/repos/:repo*/-/purge", {
      params: { repo: fx.repo },
      body: { older_than: "1d" },
    });
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe("FORBIDDEN");
  });
});
