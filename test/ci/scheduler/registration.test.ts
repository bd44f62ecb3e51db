import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { commit, repoWithOwner } from "../../support/world.ts";
import { type CiApp, ciYaml, startCiApp } from "../support.ts";
import { jobsOf, runnerSubscriptions, settle, startSecondInstance } from "./scheduler-support.ts";

/**
 * The scheduler's own subscription (SPEC "CI trigger mapping"): registered at start when
 * RUNNER_URL is set, one global webhook subscription to `<RUNNER_URL>/webhook` for commit.created
 * and proposal.opened with a secret; a restart or a second instance on the same database keeps
 * the one; with RUNNER_URL unset nothing is registered.
 */

describe("with RUNNER_URL set", () => {
  let app: CiApp;
  beforeAll(async () => {
    app = await startCiApp();
  });
  afterAll(() => app?.close());

  it("registers exactly one global subscription, ci-scheduler, for the two CI events, to <RUNNER_URL>/webhook, with a secret", async () => {
    const subs = await runnerSubscriptions(app);
    expect(subs).toHaveLength(1);
    const [sub] = subs;
    expect(sub!.repo).toBeNull();
    expect(sub!.backend).toBe("webhook");
    expect(sub!.created_by).toBe("ci-scheduler");
    expect([...sub!.event_types].sort()).toEqual(["com.svc.commit.created", "com.svc.proposal.opened"]);
    expect(sub!.url).toBe(`${app.server.ctx.config.RUNNER_URL}/webhook`);
    expect(sub!.url).toBe(`${app.url}/webhook`);
    expect(sub!.secret).toBeTruthy();
    expect(sub!.secret!.length).toBeGreaterThanOrEqual(32);
    // It is the only subscription: nobody created one by hand.
    expect(await app.sql("SELECT id FROM subscriptions")).toHaveLength(1);
  });

  it("its deliveries reach /webhook and queue CI (the subscription is live, not just a row)", async () => {
    const fx = await repoWithOwner(app);
    const seq = await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) });
    await settle(app, fx.repo);
    expect((await jobsOf(app, fx.repo)).map((j) => [j.trigger_type, j.sequence])).toEqual([["push", seq]]);
  });

  it("a restart on the same database does not add a second subscription, nor change the secret", async () => {
    const [before] = await runnerSubscriptions(app);
    const second = await startSecondInstance(app, { RUNNER_URL: app.url });
    try {
      expect(await runnerSubscriptions(app)).toEqual([before]);
    } finally {
      await second.close();
    }
    const third = await startSecondInstance(app, { RUNNER_URL: app.url });
    await third.close();
    expect(await runnerSubscriptions(app)).toEqual([before]);
  });

  it("a start with another RUNNER_URL moves the one subscription instead of adding one", async () => {
    const [before] = await runnerSubscriptions(app);
    const moved = "http://127.0.0.1:9/elsewhere";
    const second = await startSecondInstance(app, { RUNNER_URL: moved });
    try {
      const after = await runnerSubscriptions(app);
      expect(after).toEqual([{ ...before, url: `${moved}/webhook` }]);
    } finally {
      await second.close();
    }
    // And back, so this app's own deliveries reach it again.
    const back = await startSecondInstance(app, { RUNNER_URL: app.url });
    await back.close();
    expect(await runnerSubscriptions(app)).toEqual([before]);
  });
});

describe("without RUNNER_URL", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it("registers no subscription, and a commit with a CI file queues nothing", async () => {
    expect(app.server.ctx.config.RUNNER_URL).toBeUndefined();
    expect(await runnerSubscriptions(app)).toEqual([]);
    expect(await app.sql("SELECT id FROM subscriptions")).toEqual([]);
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) });
    expect(await app.sql("SELECT id FROM webhook_outbox")).toEqual([]);
    expect(await jobsOf(app, fx.repo)).toEqual([]);
  });
});
