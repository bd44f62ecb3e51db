import { beforeAll, describe, expect, it } from "vitest";
import { api, type Options, unchecked } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import type { Client } from "../support/client.ts";
import {
  commit,
  createBranch,
  expectError,
  expectStatus,
  grant,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";

/** Issues over real HTTP (docs/issues.md): one server and one repo for the file. */
const app = useFixture(startTestApp);
const fx = useFixture(() => repoWithOwner(app));
const writer = "issues-writer@example.com";
const otherWriter = "issues-other@example.com";
const maintainer = "issues-maintainer@example.com";
const reader = "issues-reader@example.com";

beforeAll(async () => {
  await grant(fx, writer, "writer");
  await grant(fx, otherWriter, "writer");
  await grant(fx, maintainer, "maintainer");
  await grant(fx, reader, "reader");
  await commit(fx, "main", { "a.md": "hello" });
});

const as = (identity: string) => api(app.as(identity));
const params = (number: number) => ({ repo: fx.repo, number: String(number) });

async function openIssue(
  body: Options<"POST", "/repos/:repo*/-/issues">["body"],
  client: Client = fx.client,
) {
  return expectStatus(
    await api(client).post("/repos/:repo*/-/issues", { params: { repo: fx.repo }, body }),
    201,
  );
}

async function events(type: string, number: number) {
  return app.sql<{ data: Record<string, unknown> }>(
    "SELECT data FROM events WHERE repo = $1 AND type = $2 AND (data->>'number')::int = $3 ORDER BY position",
    [fx.repo, type, number],
  );
}

describe("issues", () => {
  it("opens an issue with the next #n shared with proposals; a proposal's number is no issue", async () => {
    const first = await openIssue({ title: "First", body: "Body **bold**", labels: ["bug", "bug", "a"] });
    expect(first).toMatchObject({
      repo: fx.repo,
      title: "First",
      body: "Body **bold**",
      author: fx.owner,
      state: "open",
      labels: ["a", "bug"],
      assignees: [],
      close_reason: null,
      closed_by: null,
      closed_at: null,
    });
    await createBranch(fx, "topic");
    const proposal = expectStatus(
      await api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: "topic", title: "A proposal" },
      }),
      201,
    );
    const second = await openIssue({ title: "Second", assignees: [writer] }, app.as(writer));
    expect([first.number, proposal.number, second.number]).toEqual([
      first.number,
      first.number + 1,
      first.number + 2,
    ]);
    expectError(
      await api(fx.client).get("/repos/:repo*/-/issues/:number", { params: params(proposal.number) }),
      404,
      "ISSUE_NOT_FOUND",
    );
    const got = expectStatus(
      await as(reader).get("/repos/:repo*/-/issues/:number", { params: params(second.number) }),
      200,
    );
    expect(got).toMatchObject({ title: "Second", author: writer, assignees: [writer] });
    expect(await events("com.svc.issue.opened", second.number)).toEqual([
      { data: { repo: fx.repo, issue_id: second.id, number: second.number, author: writer } },
    ]);
  });

  it("numbers issues and proposals opened at once from one gapless sequence", async () => {
    const [row] = await app.sql<{ max: number }>(
      "SELECT last_number AS max FROM item_numbers WHERE repo_id = $1",
      [fx.repoId],
    );
    const max = Number(row?.max);
    const branches = ["race-1", "race-2", "race-3"];
    for (const b of branches) await createBranch(fx, b);
    const opened = await Promise.all([
      ...branches.map(async (branch) =>
        expectStatus(
          await api(fx.client).post("/repos/:repo*/-/proposals", {
            params: { repo: fx.repo },
            body: { branch, title: branch },
          }),
          201,
        ),
      ),
      ...branches.map((b) => openIssue({ title: b })),
    ]);
    const numbers = opened.map((o) => o.number).sort((a, b) => a - b);
    expect(numbers).toEqual(numbers.map((_, i) => max + 1 + i));
  });

  it("refuses bad input and readers with 4xx, changing nothing", async () => {
    const before = await app.sql("SELECT count(*) FROM issues WHERE repo_id = $1", [fx.repoId]);
    const loose = unchecked(fx.client);
    const post = (body: unknown) => loose.post("/repos/:repo*/-/issues", { params: { repo: fx.repo }, body });
    expectError(await post({ title: " " }), 400, "VALIDATION_FAILED");
    expectError(await post({ title: "t", state: "closed" }), 400, "VALIDATION_FAILED");
    expectError(await post({ title: "t", labels: ["a,b"] }), 400, "VALIDATION_FAILED");
    expectError(await post({ title: "t", author: "someone@example.com" }), 400, "VALIDATION_FAILED");
    expectError(
      await as(reader).post("/repos/:repo*/-/issues", { params: { repo: fx.repo }, body: { title: "t" } }),
      403,
      "FORBIDDEN",
    );
    expectError(await fx.client.get(`${fx.base}/issues/0`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/issues/x1`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/issues?state=merged`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/issues?sort=new`), 400, "VALIDATION_FAILED");
    expectError(await fx.client.get(`${fx.base}/issues/999999`), 404, "ISSUE_NOT_FOUND");
    expect(await app.sql("SELECT count(*) FROM issues WHERE repo_id = $1", [fx.repoId])).toEqual(before);
  });

  it("lets the author or a maintainer edit, close and reopen; others get 403", async () => {
    const issue = await openIssue({ title: "Mine" }, app.as(writer));
    const p = { params: params(issue.number) };
    expectError(
      await as(otherWriter).patch("/repos/:repo*/-/issues/:number", { ...p, body: { title: "theirs" } }),
      403,
      "FORBIDDEN",
    );
    expectError(
      await as(otherWriter).post("/repos/:repo*/-/issues/:number/close", { ...p, body: {} }),
      403,
      "FORBIDDEN",
    );
    const edited = expectStatus(
      await as(writer).patch("/repos/:repo*/-/issues/:number", {
        ...p,
        body: { title: "Mine, renamed", labels: ["docs"], assignees: [otherWriter.toUpperCase()] },
      }),
      200,
    );
    expect(edited).toMatchObject({ title: "Mine, renamed", labels: ["docs"], assignees: [otherWriter] });
    expectError(
      await as(writer).patch("/repos/:repo*/-/issues/:number", { ...p, body: {} }),
      400,
      "VALIDATION_FAILED",
    );

    const closed = expectStatus(
      await as(maintainer).post("/repos/:repo*/-/issues/:number/close", {
        ...p,
        body: { reason: "not_planned" },
      }),
      200,
    );
    expect(closed).toMatchObject({ state: "closed", close_reason: "not_planned", closed_by: maintainer });
    expect(closed.closed_at).not.toBeNull();
    expectError(
      await as(writer).post("/repos/:repo*/-/issues/:number/close", { ...p, body: {} }),
      409,
      "ISSUE_NOT_OPEN",
    );
    const reopened = expectStatus(
      await as(writer).post("/repos/:repo*/-/issues/:number/reopen", { ...p, body: {} }),
      200,
    );
    expect(reopened).toMatchObject({ state: "open", close_reason: null, closed_by: null, closed_at: null });
    expectError(
      await as(writer).post("/repos/:repo*/-/issues/:number/reopen", { ...p, body: {} }),
      409,
      "ISSUE_NOT_CLOSED",
    );
    // An empty close body closes as completed, as the origin system does.
    const done = expectStatus(
      await as(writer).post("/repos/:repo*/-/issues/:number/close", { ...p, body: {} }),
      200,
    );
    expect(done.close_reason).toBe("completed");

    const types = await app.sql<{ type: string }>(
      "SELECT type FROM events WHERE repo = $1 AND data->>'issue_id' = $2 ORDER BY position",
      [fx.repo, issue.id],
    );
    expect(types.map((t) => t.type)).toEqual([
      "com.svc.issue.opened",
      "com.svc.issue.edited",
      "com.svc.issue.closed",
      "com.svc.issue.reopened",
      "com.svc.issue.closed",
    ]);
    expect((await events("com.svc.issue.edited", issue.number))[0]?.data).toMatchObject({
      editor: writer,
      fields: ["assignees", "labels", "title"],
    });
  });

  it("lists by state, label, assignee and author, newest first, paged by `before`", async () => {
    const a = await openIssue({ title: "list a", labels: ["triage"], assignees: [maintainer] });
    const b = await openIssue({ title: "list b", labels: ["triage"] }, app.as(writer));
    const c = await openIssue({ title: "list c", labels: ["triage"] });
    expectStatus(
      await api(fx.client).post("/repos/:repo*/-/issues/:number/close", {
        params: params(c.number),
        body: {},
      }),
      200,
    );
    const list = async (query: string) =>
      (
        expectStatus(await fx.client.get(`${fx.base}/issues${query}`), 200) as {
          issues: { number: number }[];
        }
      ).issues.map((i) => i.number);
    expect(await list("?label=triage")).toEqual([b.number, a.number]);
    expect(await list("?label=triage&state=closed")).toEqual([c.number]);
    expect(await list("?label=triage&state=all")).toEqual([c.number, b.number, a.number]);
    expect(await list(`?label=triage&assignee=${maintainer}`)).toEqual([a.number]);
    expect(await list(`?label=triage&author=${writer}`)).toEqual([b.number]);
    expect(await list("?label=triage&state=all&limit=2")).toEqual([c.number, b.number]);
    expect(await list(`?label=triage&state=all&limit=2&before=${b.number}`)).toEqual([a.number]);
  });

  it("keeps comments: writers add, authors edit, maintainers delete any", async () => {
    const issue = await openIssue({ title: "Discussed" });
    const p = params(issue.number);
    const mine = expectStatus(
      await as(writer).post("/repos/:repo*/-/issues/:number/comments", {
        params: p,
        body: { body: "I see it too" },
      }),
      201,
    );
    expect(mine).toMatchObject({
      issue_id: issue.id,
      repo: fx.repo,
      body: "I see it too",
      author: writer,
      edited_at: null,
    });
    expectError(
      await as(reader).post("/repos/:repo*/-/issues/:number/comments", { params: p, body: { body: "no" } }),
      403,
      "FORBIDDEN",
    );
    expectError(
      await as(writer).post("/repos/:repo*/-/issues/:number/comments", { params: p, body: { body: "  " } }),
      400,
      "VALIDATION_FAILED",
    );
    const cp = { ...p, comment: mine.id };
    expectError(
      await as(maintainer).patch("/repos/:repo*/-/issues/:number/comments/:comment", {
        params: cp,
        body: { body: "x" },
      }),
      403,
      "FORBIDDEN",
    );
    const edited = expectStatus(
      await as(writer).patch("/repos/:repo*/-/issues/:number/comments/:comment", {
        params: cp,
        body: { body: "I see it too, on main" },
      }),
      200,
    );
    expect(edited.edited_at).not.toBeNull();
    const second = expectStatus(
      await as(otherWriter).post("/repos/:repo*/-/issues/:number/comments", {
        params: p,
        body: { body: "me too" },
      }),
      201,
    );
    expectError(
      await as(writer).delete("/repos/:repo*/-/issues/:number/comments/:comment", {
        params: { ...p, comment: second.id },
      }),
      403,
      "FORBIDDEN",
    );
    expectStatus(
      await as(maintainer).delete("/repos/:repo*/-/issues/:number/comments/:comment", {
        params: { ...p, comment: second.id },
      }),
      204,
    );
    const listed = expectStatus(
      await as(reader).get("/repos/:repo*/-/issues/:number/comments", { params: p }),
      200,
    );
    expect(listed.comments.map((c) => c.body)).toEqual(["I see it too, on main"]);
    const types = (
      await app.sql<{ type: string }>(
        "SELECT type FROM events WHERE repo = $1 AND data->>'issue_id' = $2 AND type LIKE 'com.svc.issue_comment.%' ORDER BY position",
        [fx.repo, issue.id],
      )
    ).map((r) => r.type);
    expect(types).toEqual([
      "com.svc.issue_comment.created",
      "com.svc.issue_comment.edited",
      "com.svc.issue_comment.created",
      "com.svc.issue_comment.deleted",
    ]);
  });

  it("lists what mentions #n: commits, proposals and other issues' comments, not look-alikes", async () => {
    const target = await openIssue({ title: "Target" });
    const n = target.number;
    await createBranch(fx, "mentions");
    const seq = await commit(fx, "mentions", { "m.md": "x" }, `Fix the thing (#${n})`);
    await commit(fx, "mentions", { "n.md": "x" }, `Not a mention: #${n}0, &#${n}; and x#${n}`);
    const proposal = expectStatus(
      await api(fx.client).post("/repos/:repo*/-/proposals", {
        params: { repo: fx.repo },
        body: { branch: "mentions", title: "Mentions", description: `Closes #${n}.` },
      }),
      201,
    );
    const other = await openIssue({ title: "Other" });
    expectStatus(
      await api(fx.client).post("/repos/:repo*/-/issues/:number/comments", {
        params: params(other.number),
        body: { body: `Same as #${n}` },
      }),
      201,
    );
    const refs = expectStatus(
      await as(reader).get("/repos/:repo*/-/issues/:number/refs", { params: params(n) }),
      200,
    );
    expect(refs.commits.map((c) => c.sequence)).toEqual([seq]);
    expect(refs.commits[0]).toMatchObject({ branch: "mentions", author: fx.owner });
    expect(refs.proposals).toEqual([{ number: proposal.number, title: "Mentions", state: "open" }]);
    expect(refs.issues).toEqual([{ number: other.number, title: "Other", state: "open" }]);
    // And the other way: what a commit and a proposal refer to (a look-alike is none).
    const fromCommit = expectStatus(
      await as(reader).get("/repos/:repo*/-/commit/:sequence/issues", {
        params: { repo: fx.repo, sequence: String(seq) },
      }),
      200,
    );
    expect(fromCommit.issues.map((i) => i.number)).toEqual([n]);
    const lookalike = expectStatus(
      await as(reader).get("/repos/:repo*/-/commit/:sequence/issues", {
        params: { repo: fx.repo, sequence: String(seq + 1) },
      }),
      200,
    );
    expect(lookalike.issues).toEqual([]);
    const fromProposal = expectStatus(
      await as(reader).get("/repos/:repo*/-/proposals/:id/issues", {
        params: { repo: fx.repo, id: proposal.id },
      }),
      200,
    );
    expect(fromProposal.issues.map((i) => i.number)).toEqual([n]);
    // The origin system's shape of the same: its clients list `refs`.
    expect(refs.refs.map((r) => [r.ref_type, r.ref_id, r.issue_id])).toEqual([
      ["commit", String(seq), target.id],
      ["proposal", proposal.id, target.id],
    ]);
  });

  it("links by hand only to a commit or proposal of the same repo, once, and lists a written one once", async () => {
    const issue = await openIssue({ title: "Linked by hand" });
    const link = (body: unknown, client: Client = app.as(writer)) =>
      unchecked(client).post("/repos/:repo*/-/issues/:number/refs", { params: params(issue.number), body });
    const elsewhere = await repoWithOwner(app);
    await createBranch(elsewhere, "foreign");
    const foreign = expectStatus(
      await api(elsewhere.client).post("/repos/:repo*/-/proposals", {
        params: { repo: elsewhere.repo },
        body: { branch: "foreign", title: "Elsewhere" },
      }),
      201,
    );
    // A proposal of another repo, a sequence this repo has not reached, bad bodies, a reader: refused, nothing written.
    const ownSeq = await commit(fx, "main", { "own.md": `fixes #${issue.number}` }, `fixes #${issue.number}`);
    expectError(await link({ ref_type: "commit", ref_id: String(ownSeq + 1000) }), 404, "COMMIT_NOT_FOUND");
    expectError(await link({ ref_type: "proposal", ref_id: foreign.id }), 404, "PROPOSAL_NOT_FOUND");
    expectError(await link({ ref_type: "commit", ref_id: 12 }), 400, "VALIDATION_FAILED");
    expectError(await link({ ref_type: "commit", ref_id: "012" }), 400, "VALIDATION_FAILED");
    expectError(await link({ ref_type: "proposal", ref_id: "not-a-uuid" }), 400, "VALIDATION_FAILED");
    expectError(await link({ ref_type: "commit", ref_id: "1", note: "x" }), 400, "VALIDATION_FAILED");
    expectError(await link({ ref_type: "commit", ref_id: String(ownSeq) }, app.as(reader)), 403, "FORBIDDEN");
    expect(await app.sql("SELECT 1 FROM issue_refs WHERE issue_id = $1", [issue.id])).toEqual([]);

    // A commit that already writes #n, linked too: one ref, the link's.
    const made = expectStatus(await link({ ref_type: "commit", ref_id: String(ownSeq) }), 201) as {
      id: string;
    };
    expectError(await link({ ref_type: "commit", ref_id: String(ownSeq) }), 409, "ISSUE_REF_EXISTS");
    const refs = expectStatus(
      await as(reader).get("/repos/:repo*/-/issues/:number/refs", { params: params(issue.number) }),
      200,
    );
    expect(refs.commits.map((c) => c.sequence)).toEqual([ownSeq]);
    expect(refs.refs.map((r) => [r.id, r.ref_type, r.ref_id])).toEqual([[made.id, "commit", String(ownSeq)]]);
    const linkedEvents = await events("com.svc.issue.linked", issue.number);
    expect(linkedEvents.map((e) => e.data)).toEqual([
      expect.objectContaining({ ref_type: "commit", ref_id: String(ownSeq), linked_by: writer }),
    ]);
  });
});
