import { expect } from "vitest";
import type { TestApp } from "../support/app.ts";
import { grant, type RepoHandle, world } from "../support/world.ts";

export { grant };

/**
 * Fixtures shared by the review, check-run and comment tests: a repo whose owner (admin) granted a
 * writer, a second writer, a maintainer and a reader through PUT /repos/{name}/-/roles/{identity},
 * and a stranger with no access.
 */
export interface Team extends RepoHandle<"writer" | "writer2" | "maintainer" | "reader"> {
  writer: string;
  writer2: string;
  maintainer: string;
  reader: string;
  stranger: string;
}

export async function team(app: TestApp): Promise<Team> {
  const people = { writer: "writer", writer2: "writer", maintainer: "maintainer", reader: "reader" } as const;
  const repo = await world(app).repo({ people });
  return { ...repo, ...repo.people, stranger: `stranger@${repo.org}.example.com` };
}

/**
 * A team after a commit on main by the owner and one on a new branch `feat` by the writer;
 * `head` is the writer's commit, the head of `feat`.
 */
export async function teamOnFeat(app: TestApp): Promise<Team & { head: number }> {
  const t = await team(app);
  await commitAs(t, t.owner, "main");
  await branch(t, "feat");
  return { ...t, head: await commitAs(t, t.writer, "feat") };
}

/** Creates a branch as the owner (maintainer+ is needed) and returns its head. */
export async function branch(t: Team, name: string, draft = false): Promise<number> {
  return (await t.branch(name, { draft })).head;
}

/** Commits one file as `who` and returns the new sequence. */
let edits = 0;
/** Each call writes new text by default: a commit that changes nothing is refused (EMPTY_COMMIT). */
export const commitAs = (t: Team, who: string, onBranch: string, path = "a.md", text = `x${++edits}`) =>
  t.commit(onBranch, { [path]: text }, `edit ${path}`, t.as(who));

/** Marks a branch merged directly (the merge endpoint is another issue's). */
export async function markMerged(t: Team, name: string): Promise<void> {
  await t.app.sql("UPDATE branches SET status = 'merged' WHERE repo_id = $1 AND name = $2", [t.repoId, name]);
}

/** The payloads of this repo's events of `type`, oldest first; asserts their source. */
export async function eventData(t: Team, type: string): Promise<Record<string, unknown>[]> {
  const rows = await t.app.sql<{ data: Record<string, unknown>; source: string }>(
    "SELECT data, source FROM events WHERE repo = $1 AND type = $2 ORDER BY position",
    [t.repo, type],
  );
  for (const r of rows) expect(r.source).toBe(`/repos/${t.repo}`);
  return rows.map((r) => r.data);
}

/**
 * Everything a refused review, check or comment request must leave alone: every row of the repo's
 * reviews, check runs and comments, its branches' heads and statuses, and its events.
 */
export async function state(t: Team) {
  const [row] = await t.app.sql(
    `SELECT
       (SELECT coalesce(json_agg(r ORDER BY r.id), '[]') FROM reviews r WHERE repo_id = $1) AS reviews,
       (SELECT coalesce(json_agg(c ORDER BY c.id), '[]') FROM check_runs c WHERE repo_id = $1) AS check_runs,
       (SELECT coalesce(json_agg(m ORDER BY m.id), '[]') FROM comments m WHERE repo_id = $1) AS comments,
       (SELECT json_agg(json_build_array(b.name, b.status, b.head_sequence) ORDER BY b.name)
          FROM branches b WHERE repo_id = $1) AS branches,
       (SELECT count(*)::int FROM events WHERE repo = $2) AS events`,
    [t.repoId, t.repo],
  );
  return row!;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An RFC 3339 UTC timestamp with milliseconds, as every Quire timestamp is rendered. */
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
