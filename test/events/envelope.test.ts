import { CloudEvent, HTTP, ValidationError } from "cloudevents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventTypes } from "../../shared/events/types.ts";
import { queueAndClaim } from "../ci/support.ts";
import { api, okBody } from "../support/api.ts";
import { ADMIN, startTestApp } from "../support/app.ts";
import { client } from "../support/client.ts";
import { policies } from "../support/policies.ts";
import {
  commit,
  createBranch,
  expectStatus,
  installPolicies,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";
import { type ReceivedEvent, sse } from "./sse.ts";

/**
 * Every mutation that emits an event, performed over HTTP while a global admin's SSE stream is
 * open; every event that arrives is parsed with the `cloudevents` package and checked against the
 * spec's envelope and its type's exact payload fields.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The spec's payload fields per type, with the JS type of each value. */
const issueComment = {
  repo: "string",
  issue_id: "string",
  number: "number",
  comment_id: "string",
  author: "string",
} as const;

const payloads: Record<string, Record<string, "string" | "number" | "boolean" | "string[]">> = {
  "com.svc.repo.created": { repo: "string", owner: "string", created_by: "string" },
  "com.svc.repo.deleted": { repo: "string", deleted_by: "string" },
  "com.svc.commit.created": {
    repo: "string",
    branch: "string",
    sequence: "number",
    author: "string",
    message: "string",
    file_count: "number",
  },
  "com.svc.branch.created": {
    repo: "string",
    branch: "string",
    base_sequence: "number",
    created_by: "string",
  },
  "com.svc.branch.merged": { repo: "string", branch: "string", sequence: "number", merged_by: "string" },
  "com.svc.branch.rebased": {
    repo: "string",
    branch: "string",
    new_base_sequence: "number",
    new_head_sequence: "number",
    commits_replayed: "number",
    rebased_by: "string",
  },
  "com.svc.branch.abandoned": { repo: "string", branch: "string", abandoned_by: "string" },
  "com.svc.branch.auto_merge.enabled": { repo: "string", branch: "string", enabled_by: "string" },
  "com.svc.branch.auto_merge.disabled": {
    repo: "string",
    branch: "string",
    reason: "string",
    message: "string",
    disabled_by: "string",
  },
  "com.svc.check.reported": {
    repo: "string",
    branch: "string",
    sequence: "number",
    check_name: "string",
    status: "string",
    reporter: "string",
  },
  "com.svc.merge.blocked": { repo: "string", branch: "string", actor: "string", policies: "string[]" },
  "com.svc.proposal.opened": {
    repo: "string",
    branch: "string",
    base_branch: "string",
    proposal_id: "string",
    author: "string",
    sequence: "number",
  },
  "com.svc.proposal.closed": { repo: "string", branch: "string", proposal_id: "string" },
  "com.svc.proposal.merged": {
    repo: "string",
    branch: "string",
    base_branch: "string",
    proposal_id: "string",
  },
  "com.svc.review.submitted": {
    repo: "string",
    branch: "string",
    sequence: "number",
    reviewer: "string",
    status: "string",
  },
  "com.svc.org.created": { org: "string", created_by: "string" },
  "com.svc.org.deleted": { org: "string", deleted_by: "string" },
  "com.svc.role.changed": { repo: "string", identity: "string", role: "string", changed_by: "string" },
  "com.svc.issue.opened": { repo: "string", issue_id: "string", number: "number", author: "string" },
  "com.svc.issue.edited": {
    repo: "string",
    issue_id: "string",
    number: "number",
    editor: "string",
    fields: "string[]",
  },
  "com.svc.issue.closed": {
    repo: "string",
    issue_id: "string",
    number: "number",
    closed_by: "string",
    reason: "string",
  },
  "com.svc.issue.reopened": { repo: "string", issue_id: "string", number: "number", reopened_by: "string" },
  "com.svc.issue.linked": {
    repo: "string",
    issue_id: "string",
    number: "number",
    ref_type: "string",
    ref_id: "string",
    linked_by: "string",
  },
  "com.svc.issue_comment.created": issueComment,
  "com.svc.issue_comment.edited": issueComment,
  "com.svc.issue_comment.deleted": { ...issueComment, deleted_by: "string" },
  "com.svc.secret.set": {
    repo: "string",
    name: "string",
    size_bytes: "number",
    created: "boolean",
    set_by: "string",
  },
  "com.svc.secret.deleted": { repo: "string", name: "string", deleted_by: "string" },
  "com.svc.secret.accessed": {
    repo: "string",
    name: "string",
    job_id: "string",
    check_name: "string",
    branch: "string",
    sequence: "number",
  },
};

function kindOf(v: unknown): string {
  if (Array.isArray(v)) return v.every((x) => typeof x === "string") ? "string[]" : "array";
  return typeof v;
}

let fx: RepoFixture;
const reviewer = "reviewer@example.com";

const app = useFixture(startTestApp);
const stream = useFixture(() => sse(app, "/events", ADMIN));
beforeAll(async () => {
  expect(stream.status).toBe(200);
});
afterAll(async () => {
  stream?.close();
});

/** Waits for the event of `type` (and matching `data`) after the ones already seen, and returns it. */
async function expectEvent(type: string, data: Record<string, unknown> = {}): Promise<ReceivedEvent> {
  const match = (e: ReceivedEvent) =>
    e.envelope.type === type &&
    Object.entries(data).every(([k, v]) => JSON.stringify(e.envelope.data[k]) === JSON.stringify(v));
  await stream.until((c) => c.events().some(match), 10_000, `${type} ${JSON.stringify(data)}`);
  return stream.events().find(match)!;
}

describe("every mutation emits its event", () => {
  it("org, repo, role, branch, commit, proposal, review, check, merge, merge.blocked, rebase, abandon, deletes", async () => {
    fx = await repoWithOwner(app);
    await expectEvent("com.svc.org.created", { org: fx.org, created_by: fx.owner });
    await expectEvent("com.svc.repo.created", { repo: fx.repo, owner: fx.org, created_by: fx.owner });

    await commit(fx, "main", { "a.md": "one", "b.md": "two" }, "first");
    await expectEvent("com.svc.commit.created", {
      repo: fx.repo,
      branch: "main",
      file_count: 2,
      message: "first",
    });

    expect((await fx.client.put(`${fx.base}/roles/${reviewer}`, { role: "writer" })).status).toBe(200);
    await expectEvent("com.svc.role.changed", { identity: reviewer, role: "writer", changed_by: fx.owner });

    await createBranch(fx, "feature");
    await expectEvent("com.svc.branch.created", { branch: "feature", created_by: fx.owner });
    const head = await commit(fx, "feature", { "c.md": "three" });
    // Auto-merge enabled by a writer: the relay's attempt finds a merge needs a maintainer, and
    // turns it off again (docs/auto-merge.md), so the branch stays for the rest of the walk.
    const autoMerge = { params: { repo: fx.repo, branch: "feature" } };
    expect(
      (await api(app.as(reviewer)).post("/repos/:repo*/-/branch/:branch*/auto-merge", autoMerge)).status,
    ).toBe(204);
    await expectEvent("com.svc.branch.auto_merge.enabled", { branch: "feature", enabled_by: reviewer });
    await expectEvent("com.svc.branch.auto_merge.disabled", { branch: "feature", reason: "refused" });

    const opened = expectStatus(
      await api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: "feature", title: "Feature" },
      }),
      201,
    );
    await expectEvent("com.svc.proposal.opened", {
      proposal_id: opened.id,
      base_branch: "main",
      sequence: head,
    });

    const review = await app
      .as(reviewer)
      .post(`${fx.base}/review`, { branch: "feature", status: "approved", body: "ok" });
    expect(review.status, JSON.stringify(review.body)).toBe(201);
    await expectEvent("com.svc.review.submitted", { reviewer, status: "approved", sequence: head });

    const check = await fx.client.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "lint",
      status: "passed",
    });
    expect(check.status, JSON.stringify(check.body)).toBe(201);
    await expectEvent("com.svc.check.reported", { check_name: "lint", status: "passed", reporter: fx.owner });

    const merged = await fx.client.post(`${fx.base}/merge`, { branch: "feature" });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    await expectEvent("com.svc.branch.merged", { branch: "feature", merged_by: fx.owner });
    await expectEvent("com.svc.proposal.merged", { proposal_id: opened.id, branch: "feature" });

    await createBranch(fx, "behind");
    await commit(fx, "behind", { "d.md": "four" });
    await commit(fx, "main", { "e.md": "five" });
    const rebased = await fx.client.post(`${fx.base}/rebase`, { branch: "behind" });
    expect(rebased.status, JSON.stringify(rebased.body)).toBe(200);
    await expectEvent("com.svc.branch.rebased", { branch: "behind", rebased_by: fx.owner });

    const other = okBody(
      await api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: "behind", title: "Other" },
      }),
    );
    expect((await fx.client.post(`${fx.base}/proposals/${other.id}/close`)).status).toBe(200);
    await expectEvent("com.svc.proposal.closed", { proposal_id: other.id, branch: "behind" });

    expect((await fx.client.delete(`${fx.base}/branch/behind`)).status).toBe(204);
    await expectEvent("com.svc.branch.abandoned", { branch: "behind", abandoned_by: fx.owner });

    await installPolicies(fx, { ci_must_pass: policies.ci_must_pass });
    await createBranch(fx, "gated");
    await commit(fx, "gated", { "f.md": "six" });
    expect((await fx.client.post(`${fx.base}/merge`, { branch: "gated" })).status).toBe(403);
    await expectEvent("com.svc.merge.blocked", {
      branch: "gated",
      actor: fx.owner,
      policies: ["ci_must_pass"],
    });

    expect((await fx.client.put(`${fx.base}/secrets/DEPLOY_TOKEN`, { value: "v" })).status).toBe(200);
    await expectEvent("com.svc.secret.set", { name: "DEPLOY_TOKEN", created: true, set_by: fx.owner });
    const ci = "checks:\n  - name: deploy\n    image: x\n    steps: [s]\n    secrets: [DEPLOY_TOKEN]\n";
    await commit(fx, "main", { ".svc/ci.yaml": ci });
    const { requestToken } = await queueAndClaim(app, fx.repo, "main", {
      checks: ["deploy"],
      createdBy: fx.owner,
    });
    const revealed = await client(app.url, async () => requestToken).post(`${fx.base}/secrets/reveal`, {
      check_name: "deploy",
      names: ["DEPLOY_TOKEN"],
    });
    expect(revealed.status).toBe(200);
    await expectEvent("com.svc.secret.accessed", {
      name: "DEPLOY_TOKEN",
      check_name: "deploy",
      branch: "main",
    });
    expect((await fx.client.delete(`${fx.base}/secrets/DEPLOY_TOKEN`)).status).toBe(204);
    await expectEvent("com.svc.secret.deleted", { name: "DEPLOY_TOKEN", deleted_by: fx.owner });

    const issue = okBody(
      await api(fx.client).post("/repos/:repo*/-/issues", {
        params: { repo: fx.repo },
        body: { title: "Bug" },
      }),
    );
    await expectEvent("com.svc.issue.opened", { number: issue.number, author: fx.owner });
    const at = `${fx.base}/issues/${issue.number}`;
    expect((await fx.client.patch(at, { labels: ["bug"] })).status).toBe(200);
    await expectEvent("com.svc.issue.edited", { number: issue.number, fields: ["labels"] });
    expect((await fx.client.post(`${at}/close`, { reason: "duplicate" })).status).toBe(200);
    await expectEvent("com.svc.issue.closed", { number: issue.number, reason: "duplicate" });
    expect((await fx.client.post(`${at}/reopen`, {})).status).toBe(200);
    await expectEvent("com.svc.issue.reopened", { number: issue.number, reopened_by: fx.owner });
    const linked = await commit(fx, "main", { "linked.md": "tied to the issue by hand" });
    expect((await fx.client.post(`${at}/refs`, { ref_type: "commit", ref_id: String(linked) })).status).toBe(
      201,
    );
    await expectEvent("com.svc.issue.linked", {
      number: issue.number,
      ref_type: "commit",
      ref_id: String(linked),
      linked_by: fx.owner,
    });
    const comment = await fx.client.post(`${at}/comments`, { body: "seen" });
    const commentId = (comment.body as { id: string }).id;
    await expectEvent("com.svc.issue_comment.created", { comment_id: commentId, author: fx.owner });
    expect((await fx.client.patch(`${at}/comments/${commentId}`, { body: "seen twice" })).status).toBe(200);
    await expectEvent("com.svc.issue_comment.edited", { comment_id: commentId });
    expect((await fx.client.delete(`${at}/comments/${commentId}`)).status).toBe(204);
    await expectEvent("com.svc.issue_comment.deleted", { comment_id: commentId, deleted_by: fx.owner });

    expect((await fx.client.delete(`${fx.base}/roles/${reviewer}`)).status).toBe(204);
    await expectEvent("com.svc.role.changed", { identity: reviewer, role: "" });

    expect((await fx.client.delete(`/repos/${fx.repo}`)).status).toBe(204);
    await expectEvent("com.svc.repo.deleted", { repo: fx.repo, deleted_by: fx.owner });
    expect((await fx.client.delete(`/orgs/${fx.org}`)).status).toBe(204);
    await expectEvent("com.svc.org.deleted", { org: fx.org, deleted_by: fx.owner });
  });

  it("saw every event type of the spec", () => {
    const seen = new Set(stream.events().map((e) => e.envelope.type));
    expect([...seen].sort()).toEqual([...eventTypes].sort());
    expect(Object.keys(payloads).sort()).toEqual([...eventTypes].sort());
  });

  it("every event is a valid CloudEvents 1.0 event with exactly its type's payload fields", () => {
    for (const { envelope } of stream.events()) {
      const strict = new CloudEvent({ ...envelope }, true); // throws ValidationError when not spec-valid
      expect(strict.validate()).toBe(true);
      const parsed = HTTP.toEvent({
        headers: { "content-type": "application/cloudevents+json; charset=utf-8" },
        body: JSON.stringify(envelope),
      }) as CloudEvent<Record<string, unknown>>;
      expect(parsed.specversion).toBe("1.0");
      expect(parsed.type).toBe(envelope.type);
      expect(parsed.id).toMatch(UUID);
      expect(parsed.time).toMatch(RFC3339_UTC);
      expect(parsed.datacontenttype).toBe("application/json");
      expect(Object.keys(envelope).sort()).toEqual(
        ["specversion", "type", "source", "id", "time", "datacontenttype", "data"].sort(),
      );
      const data = parsed.data!;
      if (envelope.type.startsWith("com.svc.org.")) expect(parsed.source).toBe(`/orgs/${data["org"]}`);
      else expect(parsed.source).toBe(`/repos/${data["repo"]}`);
      const want = payloads[envelope.type]!;
      expect(Object.keys(data).sort(), envelope.type).toEqual(Object.keys(want).sort());
      for (const [field, kind] of Object.entries(want))
        expect(kindOf(data[field]), `${envelope.type}.${field}`).toBe(kind);
    }
  });

  it("the stream carries exactly the log, in cursor order, each event once", async () => {
    const rows = await app.sql<{ id: string; cursor: string }>(
      "SELECT id::text, txid::text || '.' || position AS cursor FROM events ORDER BY txid, position",
    );
    await stream.waitForEvents(rows.length);
    const got = stream.events();
    expect(got.map((e) => e.envelope.id)).toEqual(rows.map((r) => r.id));
    expect(got.map((e) => e.id)).toEqual(rows.map((r) => r.cursor));
    expect(new Set(got.map((e) => e.envelope.id)).size).toBe(got.length);
  });

  it("an invalid envelope fails the cloudevents validation (the check is not vacuous)", () => {
    const good = stream.events()[0]!.envelope;
    expect(() => new CloudEvent({ ...good, source: "" }, true)).toThrow(ValidationError);
    expect(() => new CloudEvent({ ...good, time: "yesterday" }, true)).toThrow(ValidationError);
  });
});

describe("a rolled-back mutation has no event", () => {
  it("a commit whose transaction fails after its event was written leaves neither commit nor event", async () => {
    const fx2 = await repoWithOwner(app);
    // Only commits: the repo's own creation event may still be on its way to a new stream.
    const s = await sse(app, `/repos/${fx2.repo}/-/events?types=com.svc.commit.created`, fx2.owner);
    // Make the transaction fail after recordEvent wrote the event row: the whole mutation rolls back.
    await app.sql(`
      CREATE FUNCTION fail_on_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.data->>'message' = 'boom' THEN RAISE EXCEPTION 'boom'; END IF;
        RETURN NEW;
      END $$`);
    await app.sql(
      "CREATE TRIGGER fail_on_boom AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_on_boom()",
    );
    try {
      const before = await app.sql("SELECT last_sequence FROM repos WHERE id = $1", [fx2.repoId]);
      const res = await fx2.client.post(`${fx2.base}/commit`, {
        branch: "main",
        message: "boom",
        files: [{ path: "x.md", content: Buffer.from("x").toString("base64") }],
      });
      expect(res.status).toBe(500);
      expect(await app.sql("SELECT last_sequence FROM repos WHERE id = $1", [fx2.repoId])).toEqual(before);
      expect(await app.sql("SELECT 1 FROM events WHERE data->>'message' = 'boom'")).toEqual([]);
      // A later committed mutation is delivered; the rolled-back one never is.
      const seq = await commit(fx2, "main", { "y.md": "y" }, "fine");
      const [event] = await s.waitForEvents(1);
      expect(event!.envelope.data).toMatchObject({ message: "fine", sequence: seq });
      expect(s.events().some((e) => e.envelope.data.message === "boom")).toBe(false);
    } finally {
      await app.sql("DROP TRIGGER fail_on_boom ON events");
      s.close();
    }
  });
});
