import { expect } from "vitest";
import { api } from "../support/api.ts";
import type { TestApp } from "../support/app.ts";
import { b64, type Res } from "../support/client.ts";
import { expectError, expectOk, grant as grantRole, type RepoRole } from "../support/world.ts";

export { expectError };

/**
 * Small fixtures shared by the org, member, invitation, repo and role tests. Each test file starts
 * one app; tests inside a file use fresh names from `unique` so they never see each other's rows.
 */

let counter = 0;
/** A name no other test in this file uses: `<prefix>-<n>`. */
export const unique = (prefix: string) => `${prefix}-${++counter}`;

/** An email address that is unique within the file. */
export const person = (who: string) => `${unique(who)}@example.com`;

/** Creates an org as `owner` and returns its name. */
export async function makeOrg(app: TestApp, owner: string, name = unique("org")): Promise<string> {
  const res = await api(app.as(owner)).post("/orgs", { body: { name } });
  expectOk(res, 201);
  return name;
}

/** Creates `<org>/<rest>` as `owner` (who must own the org) and returns the full name. */
export async function makeRepo(app: TestApp, owner: string, org: string, rest = unique("repo")) {
  const name = `${org}/${rest}`;
  const res = await api(app.as(owner)).post("/repos", { body: { owner: org, name } });
  expectOk(res, 201);
  return name;
}

/** Adds `identity` to `org` with `role`, as the org owner `by`. */
export async function addMember(
  app: TestApp,
  by: string,
  org: string,
  identity: string,
  role: "member" | "owner" = "member",
) {
  const res = await api(app.as(by)).post("/orgs/:org/members/:identity", {
    params: { org, identity },
    body: { role },
  });
  expect(res.status, JSON.stringify(res.body)).toBeOneOf([200, 201]);
}

/** Grants `identity` a role on `repo`, as the repo admin `by`. */
export const grant = (app: TestApp, by: string, repo: string, identity: string, role: RepoRole) =>
  grantRole({ client: app.as(by), base: `/repos/${repo}/-`, repo }, identity, role);

/** A commit request body with one small file. */
export const commitBody = (branch: string, path = "a.md", text = "hello") => ({
  branch,
  message: `edit ${path}`,
  files: [{ path, content: b64(text) }],
});

export interface StoredEvent {
  id: string;
  type: string;
  source: string;
  repo: string | null;
  time: Date;
  data: Record<string, unknown>;
}

/** The events of `type` with `source`, oldest first. */
export async function eventsOf(app: TestApp, type: string, source: string): Promise<StoredEvent[]> {
  return app.sql<StoredEvent>(
    "SELECT id::text, type, source, repo, time, data FROM events WHERE type = $1 AND source = $2 ORDER BY position",
    [type, source],
  );
}

/** Asserts exactly one event of `type` from `source` with exactly `data`, in a CloudEvents envelope. */
export async function expectOneEvent(
  app: TestApp,
  type: string,
  source: string,
  data: Record<string, unknown>,
): Promise<StoredEvent> {
  const events = await eventsOf(app, type, source);
  expect(events).toHaveLength(1);
  const event = events[0]!;
  expect(event.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(event.data).toEqual(data);
  expect(Math.abs(event.time.getTime() - Date.now())).toBeLessThan(60_000);
  return event;
}

const countedTables = [
  "orgs",
  "org_members",
  "org_invites",
  "repos",
  "repo_roles",
  "branches",
  "commits",
  "events",
] as const;

/** Row counts of the tables a failed org, repo or role request must leave alone. */
export async function tableCounts(app: TestApp): Promise<Record<string, number>> {
  const select = countedTables.map((t) => `(SELECT count(*)::int FROM ${t}) AS ${t}`).join(", ");
  const [row] = await app.sql<Record<string, number>>(`SELECT ${select}`);
  return row!;
}

/** Runs a request that must fail, asserts its status and code, and that no table changed. */
export async function expectRefusedWithoutChange(
  app: TestApp,
  request: () => Promise<Res>,
  status: number,
  code: string | string[],
): Promise<Res> {
  const before = await tableCounts(app);
  const res = await request();
  expectError(res, status, code);
  expect(await tableCounts(app)).toEqual(before);
  return res;
}
