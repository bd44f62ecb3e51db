import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { issueJobToken } from "../../shared/ci/identity/issue.ts";
import { storeLog } from "../../shared/ci/jobs/logs.ts";
import { runnerWebhookSecret } from "../../shared/ci/scheduler/webhook.ts";
import type { AnyRoute, Method } from "../../shared/http/route.ts";
import { signature } from "../../shared/webhooks/send.ts";
import { queueAndClaim } from "../ci/support.ts";
import { type ApiRes, api, type Options } from "../support/api.ts";
import { ADMIN, type TestApp } from "../support/app.ts";
import { b64, type Client, client, type Res } from "../support/client.ts";

/**
 * The callers of the authorization tests. Repo roles (reader .. admin) are granted on the fixture
 * repo with PUT /repos/{name}/-/roles/{identity}; orgOwner and orgMember hold only an org role, so
 * their repo access is derived from the org; globalAdmin is in GLOBAL_ADMINS. The last two are not
 * people but CI jobs sending their job OIDC JWT (docs/ci-identity.md, "Job tokens on the repo
 * API"): `job` is a running job of the fixture repo's branch `feature`, `otherRepoJob` one of
 * another repo of the same org.
 */
export const personas = [
  "anonymous",
  "stranger",
  "reader",
  "writer",
  "maintainer",
  "admin",
  "orgOwner",
  "orgMember",
  "globalAdmin",
  "job",
  "otherRepoJob",
] as const;
export type Persona = (typeof personas)[number];
export const jobPersonas = ["job", "otherRepoJob"] as const;
export type JobPersona = (typeof jobPersonas)[number];
export const isJobPersona = (p: Persona): p is JobPersona => (jobPersonas as readonly string[]).includes(p);
/** The personas that are people signed in with an ID token. */
export type SignedIn = Exclude<Persona, "anonymous" | JobPersona>;

export const repoRolePersonas = ["reader", "writer", "maintainer", "admin"] as const;
export type RepoRolePersona = (typeof repoRolePersonas)[number];
export const isRepoRolePersona = (p: Persona): p is RepoRolePersona =>
  (repoRolePersonas as readonly string[]).includes(p);

export const identities: Record<SignedIn, string> = {
  stranger: "stranger@authz.test",
  reader: "reader@authz.test",
  writer: "writer@authz.test",
  maintainer: "maintainer@authz.test",
  admin: "repo-admin@authz.test",
  orgOwner: "owner@authz.test",
  orgMember: "member@authz.test",
  globalAdmin: ADMIN,
};

/** One HTTP request, described as data so a table can build it. */
export interface Call {
  method: Method;
  path: string;
  body?: unknown;
  /** A form post's fields (application/x-www-form-urlencoded), sent instead of a JSON body. */
  form?: Record<string, string>;
  /** Headers of the request itself (a webhook signature), beside the caller's Authorization. */
  headers?: Record<string, string>;
}

/** "METHOD /pattern" exactly as in the route tables, e.g. "GET /orgs/:org/members". */
export const routeKey = (r: Pick<AnyRoute, "method" | "path">) => `${r.method} ${r.path}`;

/** Replaces every `:name` / `:name*` of a route pattern with `values[name]` (each segment URL-encoded). */
export function concretePath(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/:(\w+)\*?/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`no value for :${name} in ${pattern}`);
    return v.split("/").map(encodeURIComponent).join("/");
  });
}

/**
 * The environment of the authorization tests' app: subscriptions need a webhook URL, and the only
 * receiver here is on 127.0.0.1 (docs/events.md, "Which URLs are accepted").
 */
export const authzEnv = {
  // Browser sign-in needs a client id; the test provider's tokens carry this audience.
  OIDC_CLIENT_ID: "quire-test",
  SVC_WEBHOOK_ALLOW_PRIVATE: "true",
  SVC_CI_WORKER_TOKEN: "authz-worker-token-0123456789",
  SVC_CLI_CLIENT_ID: "quire-cli-authz",
};

/**
 * Sends `call` to `base` with `headers`. An answer that is an event stream (the SSE routes answer
 * 200 and never end) is not read: its status and headers are kept and the request is aborted, so
 * its body is "". Any other answer is read whole (JSON parsed), as the test client does.
 */
export async function sendRaw(base: string, call: Call, headers: Record<string, string> = {}): Promise<Res> {
  const controller = new AbortController();
  const h = { ...headers, ...call.headers };
  let body: string | undefined;
  if (call.body !== undefined) {
    h["content-type"] = "application/json";
    body = JSON.stringify(call.body);
  } else if (call.form !== undefined) {
    h["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(call.form).toString();
  }
  const res = await fetch(base + call.path, {
    // A redirect (the log proxy's 302) is the answer under test, not something to follow.
    redirect: "manual",
    method: call.method,
    headers: h,
    body,
    signal: controller.signal,
  });
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    controller.abort();
    return { status: res.status, body: "", headers: res.headers };
  }
  const text = await res.text();
  return {
    status: res.status,
    body: type.includes("json") && text !== "" ? JSON.parse(text) : text,
    headers: res.headers,
  };
}

/**
 * Sends `call` as a persona (anonymous sends no Authorization header, a job its job token, anyone
 * else a fresh ID token); see `sendRaw`.
 */
export async function send(w: World, p: Persona, call: Call): Promise<Res> {
  return sendRaw(w.app.url, call, await w.headersOf(p));
}

/** What POST /subscriptions takes. */
type SubscriptionRequest = Options<"POST", "/subscriptions">["body"];

/**
 * Asserts a fixture request succeeded with exactly `status` and returns its body (a typed reply's
 * declared body).
 */
function must<T>(res: Promise<ApiRes<T>>, status: number, what: string): Promise<T>;
function must(res: Promise<Res>, status: number, what: string): Promise<unknown>;
async function must(res: Promise<Res | ApiRes<unknown>>, status: number, what: string): Promise<unknown> {
  const r = await res;
  expect(r.status, `fixture: ${what}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

/**
 * The shared fixtures of one test app: org `acme` (owned by orgOwner, with orgMember as member),
 * repo `acme/docs` created by the global admin (so orgOwner has no explicit repo role there) with
 * the four repo roles granted, one commit on main, a branch `feature`, a pending invitation, and
 * (by `colleague`, a writer who is none of the personas) a proposal on branch `proposed` and a
 * comment on `feature`, plus a release of sequence 1, and a webhook subscription of the colleague on
 * the fixture repo. For the job personas: a repo `acme/other` and a claimed CI job on each of
 * `feature` of the fixture repo and `main` of the other, with a job token of each. The `fresh*`
 * helpers make new objects for cells whose request mutates. `close` stops the webhook receiver.
 */
export class World {
  readonly org = "acme";
  readonly repo = "acme/docs";
  readonly branch = "feature";
  readonly file = "docs/a.md";
  readonly sequence = 1;
  /** A second repo of the org, whose CI job is the `otherRepoJob` persona. */
  readonly otherRepo = "acme/other";
  /** The job token of each job persona. */
  jobTokens!: Record<JobPersona, string>;
  /** The claimed CI job behind each job persona, with its request token. */
  jobs!: Record<JobPersona, { id: string; requestToken: string }>;
  /** A branch of the fixture repo with a `.svc/ci.yaml`, for manual CI runs. */
  readonly ciBranch = "ci";
  /** A check of the `job` persona's job whose log is stored. */
  readonly loggedCheck = "authz/check";
  /**
   * A writer on the fixture repo who is none of the personas: authors the commits, proposals and
   * comments that must be someone else's for every persona (self-approval, author-or-maintainer).
   */
  readonly colleague = "colleague@authz.test";
  invite!: { id: string; token: string };
  /** Id of an open proposal by `colleague` on branch `proposed`. */
  proposal!: string;
  /** Id of a comment by `colleague` on `feature`. */
  comment!: string;
  /** Name of a release of sequence 1. */
  release!: string;
  /** Id of a subscription by `colleague` to the fixture repo. */
  subscription!: string;
  /** URL of the webhook receiver (127.0.0.1; the app needs `authzEnv`), which answers every POST with 204. */
  webhookUrl!: string;
  private receiver!: http.Server;
  private counter = 0;

  readonly app: TestApp;

  private constructor(app: TestApp) {
    this.app = app;
  }

  static async create(app: TestApp): Promise<World> {
    const w = new World(app);
    w.receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(204).end());
    });
    w.receiver.listen(0, "127.0.0.1");
    await once(w.receiver, "listening");
    w.webhookUrl = `http://127.0.0.1:${(w.receiver.address() as AddressInfo).port}/authz`;
    const owner = w.as("orgOwner");
    await must(owner.post("/orgs", { name: w.org }), 201, "create org");
    await must(
      owner.post(`/orgs/${w.org}/members/${identities.orgMember}`, { role: "member" }),
      201,
      "add member",
    );
    await w.createRepo(w.repo);
    const seq = await must(
      w.as("globalAdmin").post(`/repos/${w.repo}/-/commit`, {
        branch: "main",
        message: "first",
        files: [{ path: w.file, content: b64("hello") }],
      }),
      201,
      "first commit",
    );
    expect(seq).toMatchObject({ sequence: w.sequence });
    await w.freshBranch(w.repo, { name: w.branch });
    w.invite = await w.freshInvite(w.org, "invitee@authz.test");
    await must(
      w.as("globalAdmin").put(`/repos/${w.repo}/-/roles/${w.colleague}`, { role: "writer" }),
      200,
      "grant colleague",
    );
    w.proposal = await w.freshProposal(w.colleague, {
      branch: await w.freshBranch(w.repo, { name: "proposed" }),
    });
    w.comment = await w.freshComment(w.colleague);
    w.release = await w.freshRelease();
    w.subscription = await w.freshSubscription(w.colleague);
    await w.freshBranch(w.repo, { name: w.ciBranch });
    await must(
      w.as("globalAdmin").post(`/repos/${w.repo}/-/commit`, {
        branch: w.ciBranch,
        message: "CI",
        files: [
          {
            path: ".svc/ci.yaml",
            content: b64('checks:\n  - name: authz/check\n    image: alpine\n    steps: ["true"]\n'),
          },
        ],
      }),
      201,
      "commit .svc/ci.yaml",
    );
    await w.createRepo(w.otherRepo);
    const job = await w.runningJob(w.repo, w.branch);
    const otherRepoJob = await w.runningJob(w.otherRepo, "main");
    w.jobTokens = { job: job.jwt, otherRepoJob: otherRepoJob.jwt };
    w.jobs = { job, otherRepoJob };
    await storeLog(app.server.ctx, {
      jobId: job.id,
      checkName: w.loggedCheck,
      body: Buffer.from("authz log\n"),
      contentType: "text/plain",
    });
    return w;
  }

  /**
   * A new CI job of `branch`, queued and claimed as the scheduler does: its id, request token and job token. Its
   * heartbeat is set a day ahead so no reaper re-queues it (which would void the token) however
   * long the tests run.
   */
  private async runningJob(repo: string, branch: string) {
    const ctx = this.app.server.ctx;
    const { job, requestToken } = await queueAndClaim(this.app, repo, branch, {
      checks: ["authz/check"],
      createdBy: ADMIN,
    });
    await this.app.sql("UPDATE ci_jobs SET last_heartbeat_at = now() + interval '1 day' WHERE id = $1", [
      job.id,
    ]);
    const jwt = await issueJobToken(ctx, job, { audience: ctx.config.SVC_JOB_API_AUDIENCE });
    return { id: job.id, requestToken, jwt };
  }

  /** The `X-Svc-Signature` header of a delivery of `body` (as JSON) to the scheduler's `/webhook`. */
  async webhookSignature(body: unknown): Promise<Record<string, string>> {
    const secret = await runnerWebhookSecret(this.app.server.ctx);
    return { "x-svc-signature": signature(secret, Buffer.from(JSON.stringify(body))) };
  }

  /** The Authorization header of a persona: none, a job token, or a fresh ID token. */
  async headersOf(p: Persona): Promise<Record<string, string>> {
    if (p === "anonymous") return {};
    if (isJobPersona(p)) return { authorization: `Bearer ${this.jobTokens[p]}` };
    return { authorization: `Bearer ${await this.app.idp.token(identities[p])}` };
  }

  /** Stops the webhook receiver. */
  async close(): Promise<void> {
    this.receiver.closeAllConnections();
    await new Promise((resolve) => this.receiver.close(resolve));
  }

  /** A client for a persona, or for any other identity; anonymous sends no Authorization header. */
  as(p: Persona | { identity: string }): Client {
    if (typeof p === "object") return this.app.as(p.identity);
    if (isJobPersona(p)) return client(this.app.url, async () => this.jobTokens[p]);
    return p === "anonymous" ? this.app.anonymous : this.app.as(identities[p]);
  }

  /** A name no other cell uses. */
  unique(prefix: string): string {
    return `${prefix}-${++this.counter}`;
  }

  /** Creates a repo as the global admin and grants the four repo-role personas their roles on it. */
  async createRepo(name: string): Promise<string> {
    const gadmin = this.as("globalAdmin");
    await must(gadmin.post("/repos", { owner: name.split("/")[0], name }), 201, `create repo ${name}`);
    for (const p of repoRolePersonas) {
      await must(gadmin.put(`/repos/${name}/-/roles/${identities[p]}`, { role: p }), 200, `grant ${p}`);
    }
    return name;
  }

  /** A new repo in `acme` with every persona's role in place. */
  freshRepo(): Promise<string> {
    return this.createRepo(`${this.org}/${this.unique("repo")}`);
  }

  /** A new org owned by orgOwner with orgMember as member; `withRepo` adds a repo with the repo roles. */
  async freshOrg(opts: { withRepo: boolean }): Promise<string> {
    const org = this.unique("org");
    const owner = this.as("orgOwner");
    await must(owner.post("/orgs", { name: org }), 201, `create org ${org}`);
    await must(
      owner.post(`/orgs/${org}/members/${identities.orgMember}`, { role: "member" }),
      201,
      "add member",
    );
    if (opts.withRepo) await this.createRepo(`${org}/docs`);
    return org;
  }

  async freshBranch(repo: string, opts: { name?: string; draft?: boolean } = {}): Promise<string> {
    const name = opts.name ?? this.unique("b");
    await must(
      this.as("globalAdmin").post(`/repos/${repo}/-/branch`, { name, draft: opts.draft ?? false }),
      201,
      `create branch ${name}`,
    );
    return name;
  }

  /** A pending invitation created by the org owner. */
  async freshInvite(org: string, email: string): Promise<{ id: string; token: string }> {
    const body = await must(
      api(this.as("orgOwner")).post("/orgs/:org/invites", {
        params: { org },
        body: { email, role: "member" },
      }),
      201,
      "create invite",
    );
    return { id: body.id, token: body.token };
  }

  /** A new plain member of `org`. */
  async freshMember(org: string): Promise<string> {
    const identity = `${this.unique("m")}@authz.test`;
    await must(
      this.as("orgOwner").post(`/orgs/${org}/members/${identity}`, { role: "member" }),
      201,
      "add member",
    );
    return identity;
  }

  /** A new secret of `repo`, set by the global admin; returns its name. */
  async freshSecret(repo: string): Promise<string> {
    const name = this.unique("SECRET").replace("-", "_");
    await must(
      this.as("globalAdmin").put(`/repos/${repo}/-/secrets/${name}`, { value: "v" }),
      200,
      "set secret",
    );
    return name;
  }

  /** A new identity holding `reader` on `repo`. */
  async freshGrant(repo: string): Promise<string> {
    const identity = `${this.unique("g")}@authz.test`;
    await must(
      this.as("globalAdmin").put(`/repos/${repo}/-/roles/${identity}`, { role: "reader" }),
      200,
      "grant role",
    );
    return identity;
  }

  /**
   * A new branch of the fixture repo off `main` with one commit by `author` (default `colleague`;
   * a writer or higher) on a path of its own, so it conflicts with nothing.
   */
  async freshBranchWithCommit(author: string = this.colleague): Promise<string> {
    const branch = await this.freshBranch(this.repo);
    await must(
      this.as({ identity: author }).post(`/repos/${this.repo}/-/commit`, {
        branch,
        message: "colleague's change",
        files: [{ path: `authz/${branch}.md`, content: b64(branch) }],
      }),
      201,
      `commit on ${branch}`,
    );
    return branch;
  }

  /** An open proposal on the fixture repo by `author`, on a new branch unless `branch` is given; its id. */
  async freshProposal(author: string, opts: { branch?: string } = {}): Promise<string> {
    const branch = opts.branch ?? (await this.freshBranch(this.repo));
    const body = await must(
      api(this.as({ identity: author })).post("/repos/:repo*/-/proposals", {
        params: { repo: this.repo },
        body: { branch, title: "authz" },
      }),
      201,
      `open proposal on ${branch}`,
    );
    return body.id;
  }

  /** A comment by `author` on the fixture file of `feature`; its id. */
  async freshComment(author: string): Promise<string> {
    const body = await must(
      api(this.as({ identity: author })).post("/repos/:repo*/-/comment", {
        params: { repo: this.repo },
        body: { branch: this.branch, path: this.file, body: "authz" },
      }),
      201,
      "add comment",
    );
    return body.id;
  }

  /** An issue of the fixture repo by `author`, closed when asked; its number (docs/issues.md). */
  async freshIssue(author: string, opts: { closed?: boolean } = {}): Promise<number> {
    const client = api(this.as({ identity: author }));
    const body = await must(
      client.post("/repos/:repo*/-/issues", { params: { repo: this.repo }, body: { title: "authz" } }),
      201,
      "open issue",
    );
    const params = { repo: this.repo, number: String(body.number) };
    if (opts.closed)
      await must(
        client.post("/repos/:repo*/-/issues/:number/close", { params, body: {} }),
        200,
        "close issue",
      );
    return body.number;
  }

  /** A comment by `author` on a new issue of the colleague's; the issue's path and the comment's id. */
  async freshIssueComment(author: string): Promise<string> {
    const number = await this.freshIssue(this.colleague);
    const body = await must(
      api(this.as({ identity: author })).post("/repos/:repo*/-/issues/:number/comments", {
        params: { repo: this.repo, number: String(number) },
        body: { body: "authz" },
      }),
      201,
      "comment on issue",
    );
    return `/repos/${this.repo}/-/issues/${number}/comments/${body.id}`;
  }

  /** A release of sequence 1 of the fixture repo, created by the global admin; its name. */
  async freshRelease(): Promise<string> {
    const name = this.unique("rel");
    await must(
      this.as("globalAdmin").post(`/repos/${this.repo}/-/releases`, { name, sequence: this.sequence }),
      201,
      `create release ${name}`,
    );
    return name;
  }

  /**
   * The body of a subscription to the fixture repo, or with `global` to every repo. Its one event
   * type never matches in these tests (org events have no repo; no merge is blocked here), so
   * nothing is ever sent to the receiver.
   */
  subscriptionBody(opts: { global?: boolean } = {}): SubscriptionRequest {
    const rest = { backend: "webhook" as const, config: { url: this.webhookUrl } };
    return opts.global
      ? { event_types: ["com.svc.merge.blocked"], ...rest }
      : { repo: this.repo, event_types: ["com.svc.org.deleted"], ...rest };
  }

  /**
   * A new subscription to the fixture repo created over HTTP by `creator` (reader or higher on
   * it); with `suspended` it is then suspended as ten failed attempts would (in the database), so
   * a resume has something to do. Its id.
   */
  async freshSubscription(creator: string, opts: { suspended?: boolean } = {}): Promise<string> {
    const body = await must(
      api(this.as({ identity: creator })).post("/subscriptions", { body: this.subscriptionBody() }),
      201,
      `subscribe as ${creator}`,
    );
    if (opts.suspended)
      await this.app.sql("UPDATE subscriptions SET suspended_at = now(), failure_count = 1 WHERE id = $1", [
        body.id,
      ]);
    return body.id;
  }

  /**
   * A subscription of `identity` made while it was a reader of the fixture repo, its role removed
   * since: how an identity with no role anywhere (the stranger) comes to own one.
   */
  async freshSubscriptionOfFormerReader(
    identity: string,
    opts: { suspended?: boolean } = {},
  ): Promise<string> {
    const gadmin = this.as("globalAdmin");
    await must(
      gadmin.put(`/repos/${this.repo}/-/roles/${identity}`, { role: "reader" }),
      200,
      "grant reader",
    );
    const id = await this.freshSubscription(identity, opts);
    await must(gadmin.delete(`/repos/${this.repo}/-/roles/${identity}`), 204, "revoke reader");
    return id;
  }
}
