import { createHash } from "node:crypto";
import type { TestApp } from "../support/app.ts";
import type { RepoFixture } from "../support/world.ts";

/** The commit tests' helpers; the world builder (test/support/world.ts) holds the shared ones. */
export {
  commit,
  createBranch,
  expectError,
  type RepoFixture,
  repoWithOwner,
} from "../support/world.ts";

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
