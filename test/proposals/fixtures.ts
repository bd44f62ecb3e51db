import { api, type Options } from "../support/api.ts";
import type { TestApp } from "../support/app.ts";
import type { Client } from "../support/client.ts";
import { createBranch, expectStatus, type RepoFixture } from "../support/world.ts";

export { grant } from "../support/world.ts";

/** The keys of a proposal record, sorted. */
export const proposalKeys = [
  "author",
  "base_branch",
  "branch",
  "created_at",
  "description",
  "id",
  "number",
  "repo",
  "state",
  "title",
  "updated_at",
];

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let counter = 0;
/** A branch name no other test in this file uses. */
export const uniqueBranch = (prefix = "topic") => `${prefix}-${++counter}`;

/** Opens a proposal as `as` (the repo owner by default) and returns the record; fails unless 201. */
export async function open(
  fx: RepoFixture,
  body: Options<"POST", "/repos/:repo*/-/proposals">["body"],
  as: Client = fx.client,
) {
  return expectStatus(
    await api(as).post("/repos/:repo*/-/proposals", { params: { repo: fx.repo }, body }),
    201,
  );
}

/** A fresh branch and an open proposal on it, by the repo owner. */
export async function branchWithProposal(fx: RepoFixture, title = "a proposal") {
  const branch = uniqueBranch();
  await createBranch(fx, branch);
  return open(fx, { branch, title });
}

/** The data of every event of `type` for the fixture's repo, oldest first. */
export async function eventData(app: TestApp, fx: RepoFixture, type: string): Promise<unknown[]> {
  const rows = await app.sql<{ data: unknown }>(
    "SELECT data FROM events WHERE repo = $1 AND type = $2 ORDER BY position",
    [fx.repo, type],
  );
  return rows.map((r) => r.data);
}

/**
 * Everything a refused proposal or release request must leave alone: the repo's proposals and
 * releases row by row, and its events.
 */
export async function state(app: TestApp, fx: RepoFixture) {
  return {
    proposals: await app.sql("SELECT * FROM proposals WHERE repo_id = $1 ORDER BY id", [fx.repoId]),
    releases: await app.sql("SELECT * FROM releases WHERE repo_id = $1 ORDER BY name", [fx.repoId]),
    events: await app.sql("SELECT id FROM events WHERE repo = $1 ORDER BY position", [fx.repo]),
    branches: await app.sql("SELECT id, status, head_sequence FROM branches WHERE repo_id = $1 ORDER BY id", [
      fx.repoId,
    ]),
  };
}
