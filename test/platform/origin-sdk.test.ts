import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { b64, type Res } from "../support/client.ts";
import { policies } from "../support/policies.ts";
import { installPolicies, type RepoHandle, useFixture, world } from "../support/world.ts";

/*
 * The origin system's clients against Quire, for the routes of issue 21 (docs/origin.md).
 *
 * The origin is dlorenc/docstore. Its Go SDK cannot be built here (it is not on the Go module
 * proxy), so each case below sends, over real HTTP, the request its client builds (method, path,
 * query as Go's url.Values encodes it, headers, and the body bytes json.Marshal writes: fields in
 * the Go struct's order, `omitempty` left out, a nil body as `null`), then decodes the answer as
 * Go's encoding/json would into the type that client declares, and reads what the client reads.
 * The cases come from these files of the origin repository:
 *
 * - internal/cli/app.go: IssueList, IssueCreate, IssueShow, IssueClose, IssueReopen,
 *   IssueCommentAdd, IssueCommentEdit, IssueRefs, IssueTie (issues); AutoMergeEnable and
 *   AutoMergeDisable (auto-merge); SecretsList, SecretsSet, SecretsUnset (secrets); importGitReplay
 *   and importGitSquash (import-git: `POST …/commit`); readError (every error).
 * - internal/tui/model.go: loadIssues, loadIssueDetail, createIssueCmd, closeIssueCmd,
 *   reopenIssueCmd (a `null` body), createIssueCommentCmd.
 * - sdk/go/docstore/repo.go and transport.go: RepoClient.Branch and RepoClient.BranchStatus
 *   (auto_merge), doJSON's headers and its 204 handling.
 * - api/types.go: the types decoded (Issue, IssueComment, IssueRef, the list and create
 *   responses, Branch, BranchStatusResponse, PolicyResult, ErrorResponse, CommitRequest).
 * - internal/server/handlers_secrets.go: the origin server's secret list (`{secrets: [...]}`,
 *   which its own CLI's SecretsList does not decode; docs/origin.md).
 * - internal/server/handlers_issues.go: the origin's `GET …/commit/{seq}/issues` and
 *   `GET …/proposals/{id}/issues`.
 * - docs/policy.md: the origin's OWNERS policy, which reads `input.owners` by path prefix.
 */

const app = useFixture(startTestApp);

// ---------------------------------------------------------------------------------------------
// The origin's requests, byte for byte

/** The headers every origin client request carries besides Quire's own bearer token. */
const ORIGIN_HEADERS = { "user-agent": "Go-http-client/1.1", accept: "application/json" };

/** json.Marshal's bytes: JSON with `<`, `>`, `&`, U+2028 and U+2029 escaped, as Go writes them. */
const goMarshal = (value: unknown) =>
  JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/** A request as the `ds` CLI sends it: `X-DocStore-Identity` always, JSON bodies marshalled. */
async function ds(
  repo: RepoHandle<string>,
  who: string,
  method: string,
  suffix: string,
  body?: unknown,
): Promise<Res> {
  const headers: Record<string, string> = { ...ORIGIN_HEADERS, "x-docstore-identity": who };
  if (body !== undefined) headers["content-type"] = "application/json";
  return repo.as(who).raw(method, `/repos/${repo.repo}/-${suffix}`, {
    headers,
    ...(body === undefined ? {} : { body: goMarshal(body) }),
  });
}

/** url.Values.Encode: keys sorted, values query-escaped. */
const goQuery = (values: Record<string, string>) =>
  new URLSearchParams(Object.entries(values).sort()).toString();

// ---------------------------------------------------------------------------------------------
// Go's encoding/json, as far as the origin's types need it

type GoType =
  | { kind: "string" | "int64" | "bool" | "time" }
  | { kind: "slice"; of: GoType }
  | { kind: "ptr"; to: GoType }
  | { kind: "struct"; name: string; fields: Record<string, GoType> };

const str: GoType = { kind: "string" };
const int64: GoType = { kind: "int64" };
const bool: GoType = { kind: "bool" };
const time: GoType = { kind: "time" };
const slice = (of: GoType): GoType => ({ kind: "slice", of });
const ptr = (to: GoType): GoType => ({ kind: "ptr", to });
const struct = (name: string, fields: Record<string, GoType>): GoType => ({ kind: "struct", name, fields });

/** time.Time's UnmarshalJSON: RFC 3339, fractional seconds allowed. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Decodes `value` into `t` as encoding/json does, or throws its error. A JSON null leaves a value
 * as it was (zero); an unknown field is ignored; a field decodes by a case-insensitive match of
 * its name; a number into an int64 must be whole; anything else of the wrong JSON type fails.
 * Returns what the Go value holds, under the JSON names, zero values included.
 */
function goDecode(t: GoType, value: unknown, at = "body"): unknown {
  const fail = (want: string): never => {
    throw new Error(`json: cannot unmarshal ${JSON.stringify(value)?.slice(0, 80)} into ${want} at ${at}`);
  };
  if (t.kind === "ptr") return value === null || value === undefined ? null : goDecode(t.to, value, at);
  if (value === null || value === undefined) return zero(t);
  switch (t.kind) {
    case "string":
      return typeof value === "string" ? value : fail("string");
    case "bool":
      return typeof value === "boolean" ? value : fail("bool");
    case "int64":
      return typeof value === "number" && Number.isSafeInteger(value) ? value : fail("int64");
    case "time":
      return typeof value === "string" && RFC3339.test(value) ? value : fail("time.Time");
    case "slice":
      return Array.isArray(value) ? value.map((v, i) => goDecode(t.of, v, `${at}[${i}]`)) : fail("slice");
    case "struct": {
      if (typeof value !== "object" || Array.isArray(value)) return fail(`struct ${t.name}`);
      const entries = Object.entries(value as Record<string, unknown>);
      return Object.fromEntries(
        Object.entries(t.fields).map(([name, ft]) => {
          const found = entries.find(([k]) => k === name) ?? entries.find(([k]) => k.toLowerCase() === name);
          return [name, goDecode(ft, found?.[1], `${at}.${name}`)];
        }),
      );
    }
  }
}

function zero(t: GoType): unknown {
  if (t.kind === "string" || t.kind === "time") return t.kind === "time" ? "0001-01-01T00:00:00Z" : "";
  if (t.kind === "int64") return 0;
  if (t.kind === "bool") return false;
  if (t.kind === "struct") return Object.fromEntries(Object.entries(t.fields).map(([k, f]) => [k, zero(f)]));
  return null;
}

/** The origin's types (api/types.go), in the fields their JSON tags name. */
const Go = {
  Issue: struct("Issue", {
    id: str,
    repo: str,
    number: int64,
    title: str,
    body: str,
    author: str,
    state: str,
    close_reason: ptr(str),
    closed_by: ptr(str),
    labels: slice(str),
    closed_at: ptr(time),
    created_at: time,
    updated_at: time,
  }),
  IssueComment: struct("IssueComment", {
    id: str,
    issue_id: str,
    repo: str,
    body: str,
    author: str,
    created_at: time,
    edited_at: ptr(time),
  }),
  IssueRef: struct("IssueRef", {
    id: str,
    issue_id: str,
    repo: str,
    ref_type: str,
    ref_id: str,
    created_at: time,
  }),
  CreateIssueResponse: struct("CreateIssueResponse", { id: str, number: int64 }),
  CreateIssueCommentResponse: struct("CreateIssueCommentResponse", { id: str }),
  AddIssueRefResponse: struct("AddIssueRefResponse", { id: str }),
  ErrorResponse: struct("ErrorResponse", { error: str }),
  Branch: struct("Branch", {
    repo: str,
    name: str,
    head_sequence: int64,
    base_sequence: int64,
    status: str,
    draft: bool,
    auto_merge: bool,
  }),
  BranchStatusResponse: struct("BranchStatusResponse", {
    mergeable: bool,
    policies: slice(struct("PolicyResult", { name: str, pass: bool, reason: str })),
    auto_merge: bool,
  }),
  /** internal/cli/app.go's SecretMetadata (the server's secretMetadataDTO has the same fields). */
  SecretMetadata: struct("SecretMetadata", {
    id: str,
    name: str,
    description: str,
    size_bytes: int64,
    created_by: str,
    created_at: time,
    updated_by: ptr(str),
    updated_at: ptr(time),
    last_used_at: ptr(time),
  }),
} satisfies Record<string, GoType>;
const ListIssuesResponse = struct("ListIssuesResponse", { issues: slice(Go.Issue) });
const ListIssueCommentsResponse = struct("ListIssueCommentsResponse", { comments: slice(Go.IssueComment) });
const ListIssueRefsResponse = struct("ListIssueRefsResponse", { refs: slice(Go.IssueRef) });
const ListSecretsResponse = struct("listSecretsResponse", { secrets: slice(Go.SecretMetadata) });

type GoIssue = { id: string; number: number; title: string; body: string; state: string; author: string } & {
  close_reason: string | null;
  labels: string[] | null;
};
type GoRef = { id: string; issue_id: string; ref_type: string; ref_id: string };

/** A 2xx the client accepts (each client checks its own list of statuses), decoded into `t`. */
function decoded<T>(res: Res, accepted: number[], t: GoType): T {
  expect(accepted, `${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
  return goDecode(t, res.body) as T;
}

/** An error as readError shows it: `server error: <error>`, from `{error}`. */
function originError(res: Res, status: number): string {
  expect(res.status).toBe(status);
  const { error } = goDecode(Go.ErrorResponse, res.body) as { error: string };
  expect(error.length).toBeGreaterThan(0);
  return `server error: ${error}`;
}

describe("Go's decoding, as modelled here", () => {
  it("fails where encoding/json fails and keeps zero values where it does", () => {
    expect(() => goDecode(slice(Go.SecretMetadata), { secrets: [] })).toThrow(/into slice/);
    expect(() => goDecode(Go.CreateIssueResponse, { id: "x", number: "1" })).toThrow(/into int64/);
    expect(() => goDecode(Go.IssueComment, { created_at: "yesterday" })).toThrow(/into time.Time/);
    expect(goDecode(Go.CreateIssueResponse, { ID: "x", extra: 1 })).toEqual({ id: "x", number: 0 });
    expect(goMarshal({ body: "<a&b>" })).toBe('{"body":"\\u003ca\\u0026b\\u003e"}');
  });
});

// ---------------------------------------------------------------------------------------------

describe("the origin's issue clients (ds issues, the TUI)", () => {
  const team = { writer: "writer", maintainer: "maintainer", reader: "reader" } as const;

  it("create, show, comment, edit, close and reopen as the CLI and the TUI send them", async () => {
    const repo = await world(app).repo({ people: team });
    const { writer, maintainer } = repo.people;

    // IssueCreate: CreateIssueRequest{Title, Body}; labels nil and omitted.
    const created = decoded<{ id: string; number: number }>(
      await ds(repo, writer, "POST", "/issues", { title: "Ship <it> & more", body: "**now**" }),
      [201, 200],
      Go.CreateIssueResponse,
    );
    expect(created.number).toBe(1);
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    // A body of "" is left out (omitempty).
    const bare = decoded<{ number: number }>(
      await ds(repo, writer, "POST", "/issues", { title: "No body" }),
      [201, 200],
      Go.CreateIssueResponse,
    );
    expect(bare.number).toBe(2);

    // IssueShow: the issue, then its comments and refs.
    const shown = decoded<GoIssue>(await ds(repo, writer, "GET", "/issues/1"), [200], Go.Issue);
    expect(shown).toMatchObject({
      id: created.id,
      number: 1,
      title: "Ship <it> & more",
      body: "**now**",
      author: writer,
      state: "open",
      close_reason: null,
    });

    // IssueCommentAdd: {body} → 201 {id}; IssueCommentEdit: PATCH …/comments/{id} {body} → 200.
    const comment = decoded<{ id: string }>(
      await ds(repo, maintainer, "POST", "/issues/1/comments", { body: "on it" }),
      [201, 200],
      Go.CreateIssueCommentResponse,
    );
    const edited = await ds(repo, maintainer, "PATCH", `/issues/1/comments/${comment.id}`, {
      body: "on it!",
    });
    expect(edited.status).toBe(200);
    const { comments } = decoded<{
      comments: { id: string; body: string; author: string; edited_at: string }[];
    }>(await ds(repo, writer, "GET", "/issues/1/comments"), [200], ListIssueCommentsResponse);
    expect(comments).toEqual([
      expect.objectContaining({
        id: comment.id,
        body: "on it!",
        author: maintainer,
        edited_at: expect.any(String),
      }),
    ]);

    // IssueClose: CloseIssueRequest{Reason}, "completed" when none is given → 200 Issue.
    const closed = decoded<GoIssue>(
      await ds(repo, writer, "POST", "/issues/1/close", { reason: "completed" }),
      [200],
      Go.Issue,
    );
    expect(closed).toMatchObject({ state: "closed", close_reason: "completed" });
    // closeIssueCmd (TUI) with another reason; then closing again is 409, shown by readError.
    expect(
      decoded<GoIssue>(
        await ds(repo, maintainer, "POST", "/issues/2/close", { reason: "not_planned" }),
        [200, 204],
        Go.Issue,
      ).close_reason,
    ).toBe("not_planned");
    expect(
      originError(await ds(repo, writer, "POST", "/issues/1/close", { reason: "completed" }), 409),
    ).toMatch(/^server error: .+/);

    // IssueReopen: ReopenIssueRequest{} is `{}`; the TUI's reopenIssueCmd sends `null`.
    expect(
      decoded<GoIssue>(await ds(repo, writer, "POST", "/issues/1/reopen", {}), [200], Go.Issue).state,
    ).toBe("open");
    expect(
      decoded<GoIssue>(await ds(repo, maintainer, "POST", "/issues/2/reopen", null), [200, 204], Go.Issue),
    ).toMatchObject({
      state: "open",
      close_reason: null,
    });

    // An unknown number: 404 with {error}.
    expect(originError(await ds(repo, writer, "GET", "/issues/99"), 404)).toContain("#99");
  });

  it("lists every issue, filtered by state and author as the CLI asks, without a page size", async () => {
    const repo = await world(app).repo({ people: team });
    const { writer, maintainer } = repo.people;
    // More than Quire's page of 50: the origin's list is the whole list.
    const opened = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        ds(repo, i % 3 === 0 ? maintainer : writer, "POST", "/issues", { title: `issue ${i}` }),
      ),
    );
    expect(opened.map((r) => r.status)).toEqual(Array(60).fill(201));
    for (const n of [3, 4])
      expect((await ds(repo, maintainer, "POST", `/issues/${n}/close`, { reason: "duplicate" })).status).toBe(
        200,
      );

    const list = async (q: Record<string, string>) =>
      decoded<{ issues: GoIssue[] }>(
        await ds(repo, writer, "GET", `/issues?${goQuery(q)}`),
        [200],
        ListIssuesResponse,
      ).issues;
    // IssueList: state=open by default; the TUI's loadIssues sends state=all or nothing.
    const open = await list({ state: "open" });
    expect(open.map((i) => i.number)).toEqual(
      Array.from({ length: 60 }, (_, i) => 60 - i).filter((n) => n !== 3 && n !== 4),
    );
    expect((await list({ state: "all" })).length).toBe(60);
    expect((await list({})).length).toBe(58);
    expect((await list({ state: "closed" })).map((i) => [i.number, i.close_reason])).toEqual([
      [4, "duplicate"],
      [3, "duplicate"],
    ]);
    // --author: url.Values.Encode puts it before state.
    const mine = await list({ state: "all", author: maintainer });
    expect(mine.length).toBe(20);
    expect(new Set(mine.map((i) => i.author))).toEqual(new Set([maintainer]));
    // Quire's own paging still holds when a client asks for it.
    const page = await list({ state: "all", limit: "50" });
    expect(page.length).toBe(50);
    expect((await list({ state: "all", limit: "50", before: String(page.at(-1)?.number) })).length).toBe(10);
    // A state the origin refuses, Quire refuses (400 with {error}).
    expect(
      originError(await ds(repo, writer, "GET", `/issues?${goQuery({ state: "bogus" })}`), 400),
    ).toContain("state");
  });

  it("ties an issue to a commit and a proposal (ds issues tie) and lists them as refs, both ways", async () => {
    const repo = await world(app).repo({ people: team });
    const { writer, reader } = repo.people;
    expect((await ds(repo, writer, "POST", "/issues", { title: "Track it" })).status).toBe(201);
    const linked = await repo.commit("main", { "a.md": "a" }, "a commit that names no issue");
    const mentioning = await repo.commit("main", { "b.md": "b" }, "fixes #1");
    await repo.branch("feature", { files: { "c.md": "c" } });
    const proposal = await repo
      .as(writer)
      .post(`${repo.base}/proposals`, { branch: "feature", title: "Feature" });
    expect(proposal.status).toBe(201);
    const proposalId = (proposal.body as { id: string }).id;

    // IssueTie: AddIssueRefRequest{RefType, RefID}; the CLI's --commit is a sequence as a string.
    const toCommit = decoded<{ id: string }>(
      await ds(repo, writer, "POST", "/issues/1/refs", { ref_type: "commit", ref_id: String(linked) }),
      [201, 200],
      Go.AddIssueRefResponse,
    );
    expect(toCommit.id).toMatch(/^[0-9a-f-]{36}$/);
    const toProposal = decoded<{ id: string }>(
      await ds(repo, writer, "POST", "/issues/1/refs", { ref_type: "proposal", ref_id: proposalId }),
      [201, 200],
      Go.AddIssueRefResponse,
    );
    // The same link again: 409, as the origin answers "ref already exists".
    originError(
      await ds(repo, writer, "POST", "/issues/1/refs", { ref_type: "commit", ref_id: String(linked) }),
      409,
    );
    // What the origin refuses with 400, Quire refuses with 400; a target not in the repo is 404.
    originError(
      await ds(repo, writer, "POST", "/issues/1/refs", { ref_type: "branch", ref_id: "main" }),
      400,
    );
    originError(await ds(repo, writer, "POST", "/issues/1/refs", { ref_type: "commit", ref_id: "" }), 400);
    originError(await ds(repo, writer, "POST", "/issues/1/refs", { ref_type: "commit", ref_id: "999" }), 404);
    // A reader may read the refs but not tie them.
    originError(
      await ds(repo, reader, "POST", "/issues/1/refs", { ref_type: "commit", ref_id: String(mentioning) }),
      403,
    );

    // IssueRefs / IssueShow: ListIssueRefsResponse. The tied ones by their ids, the `#1` in a
    // commit message as a computed ref.
    const { refs } = decoded<{ refs: GoRef[] }>(
      await ds(repo, reader, "GET", "/issues/1/refs"),
      [200],
      ListIssueRefsResponse,
    );
    expect(refs.map((r) => [r.ref_type, r.ref_id, r.id])).toEqual([
      ["commit", String(linked), toCommit.id],
      ["commit", String(mentioning), `commit:${mentioning}`],
      ["proposal", proposalId, toProposal.id],
    ]);

    // The other direction, on the origin's paths: the issues of a commit and of a proposal.
    for (const path of [
      `/commit/${linked}/issues`,
      `/commit/${mentioning}/issues`,
      `/proposals/${proposalId}/issues`,
    ]) {
      const { issues } = decoded<{ issues: GoIssue[] }>(
        await ds(repo, reader, "GET", path),
        [200],
        ListIssuesResponse,
      );
      expect(
        issues.map((i) => i.number),
        path,
      ).toEqual([1]);
    }
  });
});

describe("the origin's auto-merge client (ds auto-merge) and the SDK's branch reads", () => {
  it("enables with a `null` body and disables with none, each 204 exactly, and the SDK reads auto_merge", async () => {
    // A maintainer: auto-merge merges as its enabler, who must be allowed to merge (docs/auto-merge.md).
    const repo = await world(app).repo({ people: { maintainer: "maintainer" } });
    const { maintainer } = repo.people;
    // A review is needed, so enabling waits instead of merging at once.
    await installPolicies(repo, { require_review: policies.require_review });
    await repo.branch("feature", { files: { "a.md": "a" } });

    // AutoMergeEnable: postJSON(nil) sends the JSON `null`; only 204 counts as success.
    const on = await ds(repo, maintainer, "POST", "/branch/feature/auto-merge", null);
    expect([on.status, on.body]).toEqual([204, ""]);
    // RepoClient.Branch and RepoClient.BranchStatus decode auto_merge as a bool.
    const branch = decoded<{ auto_merge: boolean; head_sequence: number; status: string }>(
      await ds(repo, maintainer, "GET", "/branch/feature"),
      [200],
      Go.Branch,
    );
    expect(branch).toMatchObject({ auto_merge: true, status: "active" });
    const status = decoded<{
      mergeable: boolean;
      auto_merge: boolean;
      policies: { name: string; pass: boolean }[];
    }>(await ds(repo, maintainer, "GET", "/branch/feature/status"), [200], Go.BranchStatusResponse);
    expect(status).toMatchObject({ mergeable: false, auto_merge: true });
    expect(status.policies).toEqual([expect.objectContaining({ name: "require_review", pass: false })]);

    // AutoMergeDisable: a DELETE with no body.
    const off = await ds(repo, maintainer, "DELETE", "/branch/feature/auto-merge");
    expect([off.status, off.body]).toEqual([204, ""]);
    expect(
      decoded<{ auto_merge: boolean }>(await ds(repo, maintainer, "GET", "/branch/feature"), [200], Go.Branch)
        .auto_merge,
    ).toBe(false);
    // The CLI refuses main itself; the server does too, with {error}.
    originError(await ds(repo, maintainer, "POST", "/branch/main/auto-merge", null), 400);
  });
});

describe("the origin's secrets client (ds secrets)", () => {
  it("sets from a PUT body, lists metadata only, and unsets with 204; 404 for a missing one", async () => {
    const repo = await world(app).repo();
    const admin = repo.owner;
    const value = "s3cr3t-<value>&";
    // SecretsSet: PUT …/secrets/NAME {value, description?}; 200 or 201 counts.
    const set = await ds(repo, admin, "PUT", "/secrets/DEPLOY_TOKEN", { value, description: "deploys" });
    const meta = decoded<{ name: string; size_bytes: number; description: string }>(
      set,
      [200, 201],
      Go.SecretMetadata,
    );
    expect(meta).toMatchObject({
      name: "DEPLOY_TOKEN",
      size_bytes: Buffer.byteLength(value),
      description: "deploys",
    });
    expect(JSON.stringify(set.body)).not.toContain(value);
    expect((await ds(repo, admin, "PUT", "/secrets/OTHER", { value: "x" })).status).toBe(200);

    // SecretsList: the origin's CLI decodes a bare array, its server answers {secrets: [...]}, as
    // Quire does (docs/origin.md): the origin server's shape decodes, the CLI's does not.
    const listed = await ds(repo, admin, "GET", "/secrets");
    expect(() => goDecode(slice(Go.SecretMetadata), listed.body)).toThrow(/cannot unmarshal/);
    const { secrets } = decoded<{ secrets: { name: string; created_by: string }[] }>(
      listed,
      [200],
      ListSecretsResponse,
    );
    expect(secrets.map((s) => [s.name, s.created_by])).toEqual([
      ["DEPLOY_TOKEN", admin],
      ["OTHER", admin],
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(value);

    // SecretsUnset: DELETE → 204 or 200; a missing one is 404 ("secret NAME not found").
    const unset = await ds(repo, admin, "DELETE", "/secrets/DEPLOY_TOKEN");
    expect([unset.status, unset.body]).toEqual([204, ""]);
    expect((await ds(repo, admin, "DELETE", "/secrets/DEPLOY_TOKEN")).status).toBe(404);
  });
});

describe("the origin's import-git (ds import-git): one POST /commit per git commit", () => {
  it("replays and squashes with the CLI's CommitRequest, author included; deletions carry no content", async () => {
    const repo = await world(app).repo();
    const me = repo.owner;
    // importGitReplay: CommitRequest{Branch, Files, Message, Author}; FileChange's content is
    // base64 ([]byte) and omitted for a delete; content_type only for binary (detectContentType).
    const replay = [
      {
        branch: "main",
        files: [
          { path: "README.md", content: b64("# hi\n") },
          {
            path: "logo.png",
            content: Buffer.from([0x89, 0x50, 0xff, 0x00]).toString("base64"),
            content_type: "image/png",
          },
        ],
        message: "[git-author: ada@example.com] Initial commit",
        author: "ada",
      },
      {
        branch: "main",
        files: [{ path: "logo.png" }, { path: "README.md", content: b64("# hello\n") }],
        message: "[git-author: ada@example.com] Drop the logo",
        author: "ada",
      },
    ];
    const sequences: number[] = [];
    for (const body of replay) {
      const res = await ds(repo, me, "POST", "/commit", body);
      expect(res.status, JSON.stringify(res.body)).toBe(201); // the CLI accepts only 201
      sequences.push((res.body as { sequence: number }).sequence);
    }
    // importGitSquash: one commit of every file at HEAD.
    const squash = await ds(repo, me, "POST", "/commit", {
      branch: "main",
      files: [{ path: "docs/guide.md", content: b64("guide\n") }],
      message: "[git-import] Squashed import of main (1 files, HEAD abc1234)",
      author: "ada",
    });
    expect(squash.status).toBe(201);

    const tree = await repo.as(me).get(`${repo.base}/tree?branch=main`);
    expect((tree.body as { entries: { path: string }[] }).entries.map((e) => e.path)).toEqual([
      "README.md",
      "docs/guide.md",
    ]);
    const first = await repo.as(me).get(`${repo.base}/commit/${sequences[0]}`);
    // Quire's author is the caller; the origin's message keeps the git author, as it wrote it.
    expect(first.body).toMatchObject({ author: me, message: "[git-author: ada@example.com] Initial commit" });
  });
});

describe("code owners in the policy input, as the origin's docs/policy.md policy reads them", () => {
  // Written here in our words, in the origin's way: longest prefix by `startswith` over the keys of
  // `input.owners`, approvals at or after the base. Its `package docstore.…` works as is.
  const ORIGIN_STYLE_OWNERS = `package docstore.owners_approved

import rego.v1

default allow := false

governing(path) := input.owners[p] if {
  p := max({q | some q, _ in input.owners; startswith(path, q)})
}

approved_by_owner(path) if {
  some r in input.reviews
  r.status == "approved"
  r.sequence >= input.base_sequence
  r.reviewer in governing(path)
}

allow if {
  every path in input.changed_paths { approved_by_owner(path) }
}

reason := "every changed path needs an approval from its OWNERS" if not allow
`;

  it('keys owners by folder prefix (root ""), so the origin\'s policy passes only once the owner approves', async () => {
    const repo = await world(app).repo({ people: { carol: "writer", dan: "writer", author: "writer" } });
    const { carol, dan, author } = repo.people;
    await repo.commit("main", { OWNERS: `${dan}\n`, "docs/OWNERS": `# docs\n${carol}\n` });
    await installPolicies(repo, { owners_approved: ORIGIN_STYLE_OWNERS });
    await repo.branch("feature", { files: { "docs/guide.md": "guide" } });

    const verdict = async () =>
      decoded<{ mergeable: boolean; policies: { name: string; pass: boolean; reason: string }[] }>(
        await ds(repo, author, "GET", "/branch/feature/status"),
        [200],
        Go.BranchStatusResponse,
      );
    expect(await verdict()).toMatchObject({
      mergeable: false,
      policies: [
        {
          name: "owners_approved",
          pass: false,
          reason: "every changed path needs an approval from its OWNERS",
        },
      ],
    });
    // The root's owner does not govern docs/: the longest prefix does.
    const review = (who: string) =>
      ds(repo, who, "POST", "/review", { branch: "feature", status: "approved", body: "ok" });
    expect((await review(dan)).status).toBe(201);
    expect((await verdict()).mergeable).toBe(false);
    expect((await review(carol)).status).toBe(201);
    expect(await verdict()).toMatchObject({ mergeable: true, policies: [{ pass: true }] });
  });
});
