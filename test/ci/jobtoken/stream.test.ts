import { beforeAll, describe, expect, it } from "vitest";
import { openSse } from "../../events/sse.ts";
import { commit, repoWithOwner, useFixture } from "../../support/world.ts";
import { queueAndClaim } from "../support.ts";
import { mint, startJobTokenApp } from "./support.ts";

/** A job's event stream on its repo lives as long as the job's claim: completing it closes the stream. */

const app = useFixture(startJobTokenApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "a.md": "a\n" });
});

describe("a job token's event stream", () => {
  it("is closed at the next access re-check once the job has completed", async () => {
    const { job, requestToken } = await queueAndClaim(app, fx.repo, "main");
    const s = await openSse(app.url, `/repos/${fx.repo}/-/events`, { token: await mint(app, job) });
    try {
      expect(s.status).toBe(200);
      await app.server.ctx.events.recheck();
      expect(s.messages.some((m) => m.event === "closed")).toBe(false);
      const done = await app.bearer(requestToken).post(`/jobs/${job.id}/complete`, { status: "passed" });
      expect(done.status).toBe(200);
      await app.server.ctx.events.recheck();
      await s.ended;
      const closed = s.messages.find((m) => m.event === "closed");
      expect(JSON.parse(closed!.data!)).toMatchObject({ reason: "access revoked", repo: fx.repo });
    } finally {
      s.close();
    }
  });
});
