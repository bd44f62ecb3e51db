import { AsyncLocalStorage } from "node:async_hooks";
import type { Queryable } from "../db/pool.ts";
import { DomainError } from "../errors.ts";

/**
 * The repo a request works in, so that its transactions and a concurrent delete of that repo take
 * their locks in one order (docs/architecture.md, "Deleting a repo under load").
 *
 * Every transaction of a repo request first takes a shared advisory lock on the repo and then
 * checks that the repo still exists; deleting the repo takes the same lock exclusively before it
 * touches a row. So a delete waits only for transactions that hold no lock it will ever hold, and
 * PostgreSQL queues later shared requests behind the waiting delete (no starvation). Without it
 * a commit holding its branch row waited for the repo row that the delete held while the delete's
 * cascade waited for that branch row: a deadlock (issue 17). A transaction that starts after the
 * delete committed finds the repo gone and answers 404 REPO_NOT_FOUND.
 */
interface RepoScope {
  id: number;
  name: string;
  /** `exclusive` only for the delete itself. */
  mode: "shared" | "exclusive";
  /** False once the request's handler has returned: work it left running (timers) is not the request's. */
  open: boolean;
}

const scope = new AsyncLocalStorage<RepoScope>();

/** A key space of Quire's own for these advisory locks (the other ones use single bigint keys). */
const REPO_LOCK_CLASS = 0x5155_0001;

/** Runs a request's handler as work in `repo`; its transactions take the repo's shared lock. */
export async function runInRepo<T>(repo: { id: number; name: string }, work: () => Promise<T>): Promise<T> {
  const entry: RepoScope = { id: repo.id, name: repo.name, mode: "shared", open: true };
  try {
    return await scope.run(entry, work);
  } finally {
    entry.open = false;
  }
}

/** Runs `work` (the delete of the request's repo) with the repo's lock taken exclusively. */
export function exclusivelyInRepo<T>(repo: { id: number; name: string }, work: () => Promise<T>): Promise<T> {
  return scope.run({ id: repo.id, name: repo.name, mode: "exclusive", open: true }, work);
}

/**
 * Runs `work` outside any repo request: for work a transaction starts after it committed (webhook
 * delivery, wake-ups), which belongs to no request and must not wait for, or fail on, its repo.
 */
export function outsideRepo<T>(work: () => T): T {
  return scope.exit(work);
}

// The lock, then the check in a statement of its own. The objid is the id folded into int4: two
// repos sharing a key only wait for each other's deletes.
const repo_guard = (lock: string, id: number) =>
  `SELECT ${lock}(${REPO_LOCK_CLASS}, (${id}::bigint % 2147483647)::int); SELECT 1 FROM repos WHERE id = ${id}`;

/**
 * Opens a transaction with `begin` (BEGIN and its options) and, inside a repo request, takes the
 * repo's lock (shared, or exclusive for its delete) and refuses with REPO_NOT_FOUND when the repo
 * is gone; outside one it only begins. The three statements go in one message (the simple query
 * protocol: one round trip instead of three, on every write of a repo). Each still takes its own
 * snapshot under READ COMMITTED, so the presence check sees the repo as it is once the lock is
 * granted. The values are integers of Quire's own, written into the text.
 */
export async function beginGuarded(client: Queryable, begin: string): Promise<void> {
  const repo = scope.getStore();
  if (!repo?.open) {
    await client.query(begin);
    return;
  }
  if (!Number.isSafeInteger(repo.id)) throw new Error(`repo id ${repo.id} is not an integer`);
  const lock = repo.mode === "exclusive" ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared";
  const results = (await client.query(`${begin}; ${repo_guard(lock, repo.id)}`)) as unknown as {
    rowCount: number | null;
  }[];
  if (!results[2]?.rowCount) throw new DomainError("REPO_NOT_FOUND", `repo '${repo.name}' not found`);
}

/**
 * Whether the request's repo is gone now: an error of a request whose repo was deleted under it
 * (a statement outside a transaction, a foreign key that no longer holds) is answered 404
 * REPO_NOT_FOUND, which is what the request would get if sent again.
 */
export async function repoGone(db: Queryable, repoId: number): Promise<boolean> {
  return !(await db.query("SELECT 1 FROM repos WHERE id = $1", [repoId])).rowCount;
}
