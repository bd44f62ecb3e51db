import type { RepoFixture } from "../commits/fixtures.ts";
import type { TestApp } from "../support/app.ts";
import { b64, type Client, type Res } from "../support/client.ts";

let keys = 0;
/** A key no other test of the run uses. */
export const newKey = () => `key-${Date.now()}-${++keys}`;

/** Sends `body` as JSON with an Idempotency-Key. */
export const keyed = (c: Client, method: string, path: string, key: string, body?: unknown): Promise<Res> =>
  c.raw(method, path, {
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    headers: { "content-type": "application/json", "idempotency-key": key },
  });

/** A commit request writing `text` to `a.md`. */
export const commitBody = (text: string, branch = "main") => ({
  branch,
  message: `write ${text}`,
  files: [{ path: "a.md", content: b64(text) }],
});

/** Whether a response is a replayed answer. */
export const replayed = (res: Res) => res.headers.get("idempotent-replayed") === "true";

/** Row counts on the app's database. */
export function counter(app: TestApp) {
  const count = async (sql: string, values: unknown[]) =>
    (await app.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, values))[0]?.n;
  return {
    count,
    commitsOf: (fx: RepoFixture) => count("commits WHERE repo_id = $1", [fx.repoId]),
    eventsOf: (fx: RepoFixture, type: string) =>
      count("events WHERE repo = $1 AND type = $2", [fx.repo, type]),
  };
}
