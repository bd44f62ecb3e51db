import { createHash, randomBytes } from "node:crypto";
import { expect } from "vitest";
import type { TestApp } from "../support/app.ts";
import { b64, type Client, type Res } from "../support/client.ts";

/** A repo in a fresh org, and a client signed in as the org's owner (admin on the repo). */
export interface RepoFixture {
  client: Client;
  /** The owner's identity: every commit it makes carries this author. */
  owner: string;
  org: string;
  /** Full repo name, `<org>/docs`. */
  repo: string;
  /** `/repos/<org>/docs/-`: prefix of every repo-scoped path. */
  base: string;
  repoId: number;
}

export async function repoWithOwner(app: TestApp): Promise<RepoFixture> {
  const org = `o${randomBytes(5).toString("hex")}`;
  const owner = `${org}-owner@example.com`;
  const client = app.as(owner);
  expect((await client.post("/orgs", { name: org })).status).toBe(201);
  const repo = `${org}/docs`;
  expect((await client.post("/repos", { owner: org, name: repo })).status).toBe(201);
  const [row] = await app.sql<{ id: number }>("SELECT id FROM repos WHERE name = $1", [repo]);
  return { client, owner, org, repo, base: `/repos/${repo}/-`, repoId: row!.id };
}

/** One file change as sent in a commit request. */
export interface Change {
  path: string;
  content?: string | null;
  content_type?: string;
}

/** Changes from a map of path to text/bytes, or null to delete. */
export function changes(files: Record<string, string | Buffer | null>): Change[] {
  return Object.entries(files).map(([path, data]) => ({ path, content: data === null ? null : b64(data) }));
}

/** Commits and returns the new sequence; fails the test unless the commit is created. */
export async function commit(
  fx: RepoFixture,
  branch: string,
  files: Record<string, string | Buffer | null> | Change[],
  message = `change on ${branch}`,
): Promise<number> {
  const list = Array.isArray(files) ? files : changes(files);
  const res = await fx.client.post(`${fx.base}/commit`, { branch, message, files: list });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.sequence as number;
}

/** Creates a branch (from main's head) and returns its record. */
export async function createBranch(fx: RepoFixture, name: string, draft?: boolean) {
  const res = await fx.client.post(`${fx.base}/branch`, draft === undefined ? { name } : { name, draft });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

export const sha256hex = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** A file path for a URL: each segment percent-encoded, the slashes kept. */
export const urlPath = (path: string) => path.split("/").map(encodeURIComponent).join("/");

/** What a failed write must leave alone: the repo's counter and the row counts it could touch. */
export async function snapshot(app: TestApp, fx: RepoFixture) {
  const [row] = await app.sql(
    `SELECT (SELECT last_sequence FROM repos WHERE id = $1) AS last_sequence,
            (SELECT count(*)::int FROM commits WHERE repo_id = $1) AS commits,
            (SELECT count(*)::int FROM file_changes WHERE repo_id = $1) AS file_changes,
            (SELECT count(*)::int FROM contents WHERE repo_id = $1) AS contents,
            (SELECT count(*)::int FROM branches WHERE repo_id = $1) AS branches,
            (SELECT count(*)::int FROM events WHERE repo = $2) AS events`,
    [fx.repoId, fx.repo],
  );
  return row!;
}

/**
 * Asserts the one error shape, `{code, error}` with an UPPER_SNAKE code and a non-empty message,
 * and returns the message for assertions on what it names.
 */
export function expectError(res: Res, status: number, code: string): string {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(["code", "error"]);
  expect(res.body.code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  expect(res.body.code).toBe(code);
  expect(typeof res.body.error).toBe("string");
  expect(res.body.error.length).toBeGreaterThan(0);
  return res.body.error as string;
}
