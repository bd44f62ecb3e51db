import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect } from "vitest";
import { queueAndClaim } from "../ci/support.ts";
import { type ApiError, type ApiRes, api } from "./api.ts";
import type { TestApp } from "./app.ts";
import { b64, type Client, type Res } from "./client.ts";

/**
 * The test world: one builder for the things tests set up over HTTP (orgs, repos, members, repo
 * roles, branches, commits, CI jobs), the one error assertion, and `useFixture`, which starts what
 * a file shares (an app, a receiver, a repo) once per file. Every builder step asserts its own
 * status, so a test reads as what it sets up, and a broken setup fails where it happens.
 *
 * ```ts
 * const app = useFixture(startTestApp);
 * it("lets a writer commit on a branch", async () => {
 *   const repo = await world(app).repo({ people: { writer: "writer" } });
 *   const feature = await repo.branch("feature", { files: { "a.md": "hello" } });
 *   await repo.commit(feature.name, { "a.md": "edited" }, "edit", repo.as("writer"));
 * });
 * ```
 */

/**
 * A value started once before a file's tests (`beforeAll`) and closed after them (`afterAll`, when
 * it has a `close()`), usable at once: the returned object forwards every property to the started
 * value (reads and writes), so `const app = useFixture(startTestApp)` replaces the
 * `let app; beforeAll(...)` pair.
 * Reading a property before the file's `beforeAll` has run throws.
 */
export function useFixture<T extends object>(start: () => Promise<T>): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  });
  afterAll(async () => {
    const close = (value as { close?: unknown } | undefined)?.close;
    if (typeof close === "function") await close.call(value);
  });
  const target = (): T => {
    if (value === undefined) throw new Error("useFixture: used before its beforeAll ran");
    return value;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      const v = Reflect.get(target(), key);
      return typeof v === "function" ? v.bind(target()) : v;
    },
    set: (_, key, v) => Reflect.set(target(), key, v),
    has: (_, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(target(), key);
      return d && { ...d, configurable: true };
    },
  });
}

/** The fields some error codes add to `{code, error}` (docs/errors.md). */
const extraErrorFields: Record<string, string[]> = {
  METHOD_NOT_ALLOWED: ["allow"],
  MERGE_CONFLICT: ["conflicts"],
  REBASE_CONFLICT: ["conflicts"],
  POLICY_DENIED: ["policies"],
  EMPTY_COMMIT: ["head_sequence"],
};

/**
 * Asserts the one error shape: exactly `{code, error}` (plus the fields docs/errors.md lists for
 * the code), an UPPER_SNAKE code equal to `code` (or
 * one of `code`), a non-empty message, and `status`. Returns the message, for assertions on what
 * it names.
 */
export function expectError(res: Res<unknown>, status: number, code: string | readonly string[]): string {
  const body = res.body as Partial<ApiError> | undefined;
  expect({ status: res.status, code: body?.code }, JSON.stringify(res.body)).toEqual({
    status,
    code: typeof code === "string" ? code : expect.toBeOneOf([...code]),
  });
  const error = res.body as ApiError;
  const fields = ["code", "error", ...(extraErrorFields[error.code] ?? [])];
  expect(Object.keys(error).sort()).toEqual(fields.sort());
  expect(error.code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  expect(typeof error.error).toBe("string");
  expect(error.error.length).toBeGreaterThan(0);
  return error.error;
}

/** The error body of a refused request (typed or not), for what it names beyond `expectError`. */
export function errorOf(res: Res<unknown>): ApiError {
  expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
  return res.body as ApiError;
}

/**
 * Fails the test, showing the body, unless `res` has `status`; returns the body. A typed reply
 * (`api()`) gives its declared body, so `status` must be a success there (errors: `expectError`).
 */
export function expectStatus<T>(res: ApiRes<T>, status: number | readonly number[]): T;
export function expectStatus<T = unknown>(res: Res<T>, status: number | readonly number[]): T;
export function expectStatus<T>(res: Res<T> | ApiRes<T>, status: number | readonly number[]): T {
  const expected = typeof status === "number" ? status : expect.toBeOneOf([...status]);
  expect(res.status, JSON.stringify(res.body)).toEqual(expected);
  if ("ok" in res && !res.ok) throw new Error(`expectStatus(${status}) on an error reply: use expectError`);
  return res.body as T;
}

/**
 * Fails the test, showing the body, unless the typed reply `res` has `status` (a success); after
 * it, `res.body` has the route's declared type.
 */
export function expectOk<T>(
  res: ApiRes<T>,
  status: number | readonly number[],
): asserts res is Extract<ApiRes<T>, { ok: true }>;
export function expectOk(res: Res<unknown>, status: number | readonly number[]): void;
export function expectOk(res: Res<unknown>, status: number | readonly number[]): void {
  expectStatus(res, status);
}

/** File contents by path (text or bytes), or null to delete: what `branch()` and `commit()` take. */
export type Files = Record<string, string | Buffer | null>;

/** One file change as sent in a commit request. */
export interface Change {
  path: string;
  content?: string | null;
  content_type?: string;
}

/** Commit request changes from a map of path to text/bytes, or null to delete. */
export function changes(files: Files): Change[] {
  return Object.entries(files).map(([path, data]) => ({ path, content: data === null ? null : b64(data) }));
}

/** A repo role as `PUT /repos/{name}/-/roles/{identity}` grants it. */
export type RepoRole = "reader" | "writer" | "maintainer" | "admin";

/** What `world.repo()` builds: people by name, granted a repo role, or made org members. */
export interface RepoOptions<P extends string> {
  /** The repo's name after `<org>/`; `docs` unless given. */
  name?: string;
  /** People to grant a repo role, by the name tests call them (`{ writer: "writer" }`). */
  people?: Record<P, RepoRole>;
  /** People to make members of the org (no repo role). */
  members?: Record<string, "member" | "owner">;
}

/** A branch as built: its name and its head after the commits the builder made. */
export interface BranchHandle {
  name: string;
  head: number;
  /** Commits `files` as the repo owner; returns and records the new head. */
  commit(files: Files | Change[], message?: string): Promise<number>;
}

/**
 * A repo in a fresh org, and a client signed in as the org's owner (admin on the repo). The fields
 * are those of the old per-area `RepoFixture` (test/commits/fixtures.ts), which it replaces.
 */
export interface RepoFixture {
  client: Client;
  /** The owner's identity: every commit it makes carries this author. */
  owner: string;
  org: string;
  /** Full repo name, `<org>/<name>`. */
  repo: string;
  /** `/repos/<org>/<name>/-`: prefix of every repo-scoped path. */
  base: string;
  repoId: number;
}

/** A repo with its people: typed handles with a client per person. */
export interface RepoHandle<P extends string = never> extends RepoFixture {
  app: TestApp;
  /** The identities (emails) of the people asked for, by their names. */
  people: Record<P, string>;
  /** A client signed in as one of `people` (by name) or as any identity (by email). */
  as(who: P | (string & {})): Client;
  /** Grants (or changes) `identity`'s repo role, as the owner. */
  grant(identity: string, role: RepoRole): Promise<void>;
  /** Creates a branch from main's head as the owner, then commits `files` on it if given. */
  branch(name: string, opts?: { files?: Files; draft?: boolean; message?: string }): Promise<BranchHandle>;
  /** Commits `files` on `branch` as the owner (or `as`); returns the new sequence. */
  commit(branch: string, files: Files | Change[], message?: string, as?: Client): Promise<number>;
  /** A CI job queued on `branch` at its head and claimed at once (see `queueAndClaim`). */
  job(branch: string, opts?: Parameters<typeof queueAndClaim>[3]): ReturnType<typeof queueAndClaim>;
}

/** An org with its owner. */
export interface OrgHandle {
  name: string;
  owner: string;
  client: Client;
  /** Adds (or changes) a member, as the owner. */
  addMember(identity: string, role?: "member" | "owner"): Promise<void>;
  /** A repo of this org; see `RepoOptions`. */
  repo<P extends string = never>(opts?: RepoOptions<P>): Promise<RepoHandle<P>>;
}

/** The builder; `world(app)` is cheap, so call it where it is needed. */
export interface World {
  app: TestApp;
  /** A fresh, unused name: `<prefix><10 hex digits>`. */
  unique(prefix?: string): string;
  /** A fresh org whose owner is `owner` (a fresh identity unless given), with `members` added. */
  org(opts?: { name?: string; owner?: string; members?: string[] }): Promise<OrgHandle>;
  /** A repo in a fresh org; see `RepoOptions`. */
  repo<P extends string = never>(opts?: RepoOptions<P>): Promise<RepoHandle<P>>;
}

export function world(app: TestApp): World {
  const unique = (prefix = "o") => `${prefix}${randomBytes(5).toString("hex")}`;
  const w: World = {
    app,
    unique,
    async org(opts = {}) {
      const name = opts.name ?? unique();
      const owner = opts.owner ?? `${name}-owner@example.com`;
      const client = app.as(owner);
      expectStatus(await api(client).post("/orgs", { body: { name } }), 201);
      const org = orgHandle(app, name, owner, client);
      for (const member of opts.members ?? []) await org.addMember(member);
      return org;
    },
    async repo(opts = {}) {
      return (await w.org()).repo(opts);
    },
  };
  return w;
}

function orgHandle(app: TestApp, name: string, owner: string, client: Client): OrgHandle {
  const org: OrgHandle = {
    name,
    owner,
    client,
    async addMember(identity, role = "member") {
      expectStatus(
        await api(client).post("/orgs/:org/members/:identity", {
          params: { org: name, identity },
          body: { role },
        }),
        [200, 201],
      );
    },
    async repo<P extends string = never>(opts: RepoOptions<P> = {}) {
      const repo = `${name}/${opts.name ?? "docs"}`;
      expectStatus(await api(client).post("/repos", { body: { owner: name, name: repo } }), 201);
      const [row] = await app.sql<{ id: number }>("SELECT id FROM repos WHERE name = $1", [repo]);
      const fx = { client, owner, org: name, repo, base: `/repos/${repo}/-`, repoId: row?.id ?? 0 };
      const handle = repoHandle(app, fx, personIds(name, opts.people));
      for (const [who, role] of roleEntries(opts.people)) await handle.grant(handle.people[who], role);
      for (const [who, role] of Object.entries(opts.members ?? {})) {
        await org.addMember(`${who}@${name}.example.com`, role);
      }
      return handle;
    },
  };
  return org;
}

const roleEntries = <P extends string>(people: Record<P, RepoRole> | undefined) =>
  Object.entries(people ?? {}) as [P, RepoRole][];

function personIds<P extends string>(
  org: string,
  people: Record<P, RepoRole> | undefined,
): Record<P, string> {
  return Object.fromEntries(roleEntries(people).map(([who]) => [who, `${who}@${org}.example.com`])) as Record<
    P,
    string
  >;
}

/** A repo in a fresh org and its owner's client: `world(app).repo()`. */
export const repoWithOwner = (app: TestApp): Promise<RepoHandle> => world(app).repo();

/** Creates a branch from main's head as `fx.client` (the owner) and returns its record. */
export async function createBranch(
  fx: Pick<RepoFixture, "client" | "base" | "repo">,
  name: string,
  draft?: boolean,
) {
  const res = await api(fx.client).post("/repos/:repo*/-/branch", {
    params: { repo: fx.repo },
    body: draft === undefined ? { name } : { name, draft },
  });
  return expectStatus(res, 201);
}

/** Commits `files` on `branch` as `fx.client`; returns the new sequence, failing the test unless 201. */
export async function commit(
  fx: Pick<RepoFixture, "client" | "base" | "repo">,
  branch: string,
  files: Files | Change[],
  message = `change on ${branch}`,
) {
  const list = Array.isArray(files) ? files : changes(files);
  const res = await api(fx.client).post("/repos/:repo*/-/commit", {
    params: { repo: fx.repo },
    body: { branch, message, files: list },
  });
  return expectStatus(res, 201).sequence;
}

/** Commits `.svc/policy/<name>.rego` files to main as `fx.client` (an owner may); returns the sequence. */
export function installPolicies(
  fx: Pick<RepoFixture, "client" | "base" | "repo">,
  sources: Record<string, string>,
) {
  const files = Object.fromEntries(
    Object.entries(sources).map(([name, text]) => [`.svc/policy/${name}.rego`, text]),
  );
  return commit(fx, "main", files, "install policies");
}

/** Grants (or changes) `identity`'s role on `fx`'s repo, as `fx.client` (the owner). */
export async function grant(
  fx: Pick<RepoFixture, "client" | "base" | "repo">,
  identity: string,
  role: RepoRole,
): Promise<void> {
  expectStatus(
    await api(fx.client).put("/repos/:repo*/-/roles/:identity", {
      params: { repo: fx.repo, identity },
      body: { role },
    }),
    200,
  );
}

function repoHandle<P extends string>(
  app: TestApp,
  fx: RepoFixture,
  people: Record<P, string>,
): RepoHandle<P> {
  const repo: RepoHandle<P> = {
    ...fx,
    app,
    people,
    as: (who) => app.as((people as Record<string, string>)[who] ?? who),
    grant: (identity, role) => grant(fx, identity, role),
    commit: (branch, files, message, as = fx.client) => commit({ ...fx, client: as }, branch, files, message),
    async branch(name, opts = {}) {
      const created = await createBranch(fx, name, opts.draft);
      const b: BranchHandle = {
        name,
        head: created.head_sequence,
        commit: async (files, message) => {
          b.head = await repo.commit(name, files, message);
          return b.head;
        },
      };
      if (opts.files) await b.commit(opts.files, opts.message);
      return b;
    },
    job: (branch, opts) => queueAndClaim(app, fx.repo, branch, opts),
  };
  return repo;
}
