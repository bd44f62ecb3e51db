import { beforeAll, describe, expect, it } from "vitest";
import { signature } from "../../../shared/webhooks/send.ts";
import { api } from "../../support/api.ts";
import { commit, createBranch, errorOf, expectOk, repoWithOwner, useFixture } from "../../support/world.ts";
import { ciYaml, startCiApp } from "../support.ts";
import {
  deliver,
  envelope,
  eventId,
  jobsOf,
  runnerSecret,
  settle,
  storedEnvelope,
} from "./scheduler-support.ts";

/**
 * `POST /webhook` (SPEC "CI scheduler endpoints", "CI trigger mapping"): every delivery must carry
 * X-Svc-Signature, the HMAC of its exact bytes under the subscription's secret; anything else is
 * 401 and queues nothing. A redelivery queues nothing new; an event type the scheduler does not
 * act on is acknowledged.
 */

let head: number;

const app = useFixture(startCiApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { ".svc/ci.yaml": ciYaml(["docs/lint"]) });
  await createBranch(fx, "feature");
  head = await commit(fx, "feature", { "a.md": "a\n" });
  await settle(app, fx.repo);
});

/** A commit.created delivery for feature's head with a fresh event id: accepted, it queues a push job. */
const freshCommitEvent = () =>
  envelope("com.svc.commit.created", {
    repo: fx.repo,
    branch: "feature",
    sequence: head,
    author: fx.owner,
    message: "write notes",
    file_count: 1,
  });

async function jobCount(): Promise<number> {
  return (await jobsOf(app, fx.repo)).length;
}

describe("webhook intake", () => {
  it("a correctly signed delivery is accepted and queues (the control for the refusals below)", async () => {
    const before = await jobCount();
    const res = await deliver(app, freshCommitEvent());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ jobs: [{ id: expect.any(String), trigger_type: "push" }] });
    expect(await jobCount()).toBe(before + 1);
  });

  it("a delivery without X-Svc-Signature is 401 and queues nothing", async () => {
    const before = await jobCount();
    const res = await deliver(app, freshCommitEvent(), null);
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(errorOf(res).code).toBe("UNAUTHENTICATED");
    expect(await jobCount()).toBe(before);
  });

  it("a delivery with a wrong signature is 401 and queues nothing", async () => {
    const before = await jobCount();
    const body = freshCommitEvent();
    for (const sig of [
      signature("not-the-secret", body),
      `sha256=${"0".repeat(64)}`,
      signature(await runnerSecret(app), body).replace("sha256=", "sha1="),
      signature(await runnerSecret(app), body).toUpperCase(),
      "",
      "garbage",
    ]) {
      const res = await deliver(app, body, sig);
      expect(res.status, `${sig}: ${JSON.stringify(res.body)}`).toBe(401);
      expect(errorOf(res).code).toBe("UNAUTHENTICATED");
    }
    expect(await jobCount()).toBe(before);
  });

  it("a body altered after signing is 401 and queues nothing", async () => {
    const before = await jobCount();
    const body = freshCommitEvent();
    const sig = signature(await runnerSecret(app), body);
    // One more byte of whitespace: the JSON means the same, the bytes do not.
    const padded = Buffer.concat([body, Buffer.from(" ")]);
    // Another branch named in the same signed envelope.
    const retargeted = Buffer.from(body.toString("utf8").replace('"branch":"feature"', '"branch":"main"'));
    expect(retargeted.equals(body)).toBe(false);
    for (const altered of [padded, retargeted]) {
      const res = await deliver(app, altered, sig);
      expect(res.status, JSON.stringify(res.body)).toBe(401);
    }
    expect(await jobCount()).toBe(before);
  });

  it("a correctly signed redelivery of an event that already queued a job queues nothing new", async () => {
    const id = await eventId(app, fx.repo, "com.svc.commit.created", { branch: "feature", sequence: head });
    const jobs = await jobsOf(app, fx.repo);
    // The outbox already delivered it once and that delivery queued feature's push job.
    expect(jobs.filter((j) => j.trigger_branch === "feature" && j.sequence === head).length).toBeGreaterThan(
      0,
    );
    const original = await storedEnvelope(app, id);
    for (let i = 0; i < 2; i++) {
      const res = await deliver(app, original);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ jobs: [] });
    }
    expect(await jobsOf(app, fx.repo)).toEqual(jobs);
  });

  it("a redelivered proposal.opened queues nothing new", async () => {
    await createBranch(fx, "topic");
    await commit(fx, "topic", { "t.md": "t\n" });
    await settle(app, fx.repo);
    const opened = await api(fx.client).post("/repos/:repo*/-/proposals", {
      params: { repo: fx.repo },
      body: { branch: "topic", title: "topic" },
    });
    expectOk(opened, 201);
    await settle(app, fx.repo);
    const jobs = await jobsOf(app, fx.repo);
    expect(jobs.filter((j) => j.trigger_type === "proposal")).toHaveLength(1);
    const id = await eventId(app, fx.repo, "com.svc.proposal.opened", { proposal_id: opened.body.id });
    const res = await deliver(app, await storedEnvelope(app, id));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ jobs: [] });
    expect(await jobsOf(app, fx.repo)).toEqual(jobs);
  });

  it("an unknown event type is acknowledged with 200 and queues nothing", async () => {
    const before = await jobsOf(app, fx.repo);
    for (const type of ["com.svc.review.submitted", "com.svc.branch.created", "com.example.unknown"]) {
      const res = await deliver(
        app,
        envelope(type, { repo: fx.repo, branch: "feature", sequence: head, reviewer: fx.owner }),
      );
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body).toEqual({ jobs: [] });
    }
    expect(await jobsOf(app, fx.repo)).toEqual(before);
  });

  it("a signed delivery that is not a CloudEvent is 400 and queues nothing", async () => {
    const before = await jobCount();
    for (const body of [
      Buffer.from("not json"),
      Buffer.from(JSON.stringify({ type: "com.svc.commit.created" })),
      Buffer.from(JSON.stringify([])),
    ]) {
      const res = await deliver(app, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
    }
    expect(await jobCount()).toBe(before);
  });

  it("signed commit.created or proposal.opened data not as the service sends it is 400 (not 500) and queues nothing", async () => {
    const before = await jobCount();
    for (const [type, data] of [
      ["com.svc.commit.created", { repo: fx.repo }],
      ["com.svc.commit.created", { repo: fx.repo, branch: "feature", sequence: "3" }],
      ["com.svc.commit.created", { repo: fx.repo, branch: "feature", sequence: 0 }],
      [
        "com.svc.proposal.opened",
        { repo: fx.repo, branch: "feature", base_branch: "main", proposal_id: "nope", sequence: head },
      ],
    ] as const) {
      const res = await deliver(app, envelope(type, data));
      expect(res.status, `${type} ${JSON.stringify(data)}: ${JSON.stringify(res.body)}`).toBe(400);
      const error = errorOf(res);
      expect(error.code).toBe("VALIDATION_FAILED");
      expect(error.error).toContain("data.");
    }
    expect(await jobCount()).toBe(before);
  });

  it("an event naming a repo or branch that does not exist (any more) is acknowledged and queues nothing", async () => {
    const before = await jobCount();
    for (const data of [
      { repo: "no-such-org/docs", branch: "main", sequence: 3 },
      { repo: fx.repo, branch: "gone", sequence: head },
    ]) {
      const res = await deliver(app, envelope("com.svc.commit.created", data));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ jobs: [] });
    }
    expect(await jobCount()).toBe(before);
  });
});
