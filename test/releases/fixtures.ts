import { api, type Options } from "../support/api.ts";
import type { TestApp } from "../support/app.ts";
import type { Client } from "../support/client.ts";
import type { RepoFixture } from "../support/world.ts";
import { expectOk } from "../support/world.ts";

export const releaseKeys = ["created_at", "created_by", "name", "notes", "sequence"];

/** Creates a release as `as` (the repo owner by default) and returns it; fails unless 201. */
export async function release(
  fx: RepoFixture,
  body: Options<"POST", "/repos/:repo*/-/releases">["body"],
  as: Client = fx.client,
) {
  const res = await api(as).post("/repos/:repo*/-/releases", { params: { repo: fx.repo }, body });
  expectOk(res, 201);
  return res.body;
}

/** The repo's release rows and event count: what a refused request must leave alone. */
export async function releaseState(app: TestApp, fx: RepoFixture) {
  return {
    releases: await app.sql("SELECT * FROM releases WHERE repo_id = $1 ORDER BY name", [fx.repoId]),
    events: await app.sql("SELECT count(*)::int AS n FROM events WHERE repo = $1", [fx.repo]),
  };
}
