/**
 * This process's cache of answers that can never change, for the read path (docs/architecture.md,
 * "The read cache").
 *
 * Only immutable things go in, so no instance ever has to tell another one anything:
 * - a tree page of a view: the view is (branch id, own_from, at, parent id, parent_at), and every
 *   row a view reads was committed before `at` was the branch's head (a rebase opens a new epoch,
 *   it never rewrites one); branch ids are never reused, so a purged branch's keys are never asked
 *   for again;
 * - a path's version in a view, for the same reason;
 * - a file history page of a view (the branch names it shows never change);
 * - a small body by (repo id, SHA-256): content-addressed, so the same key is the same bytes.
 * What does change (branch heads, epochs, roles, whether the repo exists) is never cached: each
 * request reads it in its one access statement (shared/access/roles.ts), and that fixes the view,
 * so a change made through any instance is seen by the next request on every instance.
 *
 * Bounded by an estimate of its bytes, least recently used out first, so it cannot grow the
 * process past a few MiB whatever is read.
 */
export interface ReadCache {
  get<T>(key: string): T | undefined;
  set(key: string, value: unknown, bytes: number): void;
  /** What the cache holds now, for tests and the bench. */
  stats(): { entries: number; bytes: number; hits: number; misses: number };
}

/** The default budget: a few hundred tree pages, or a few thousand small bodies. */
export const READ_CACHE_BYTES = 8 * 1024 * 1024;

/** A cache of at most `budget` estimated bytes (0 turns it off). */
export function createReadCache(budget = READ_CACHE_BYTES): ReadCache {
  // A Map keeps insertion order: re-inserting on a hit makes its first key the least recently used.
  const entries = new Map<string, { value: unknown; bytes: number }>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  return {
    get<T>(key: string): T | undefined {
      const entry = entries.get(key);
      if (!entry) {
        misses++;
        return undefined;
      }
      hits++;
      entries.delete(key);
      entries.set(key, entry);
      return entry.value as T;
    },
    set(key, value, size) {
      if (size > budget / 8) return; // one huge answer must not flush everything else
      const old = entries.get(key);
      if (old) bytes -= old.bytes;
      entries.delete(key);
      entries.set(key, { value, bytes: size });
      bytes += size;
      for (const [k, e] of entries) {
        if (bytes <= budget) break;
        entries.delete(k);
        bytes -= e.bytes;
      }
    },
    stats: () => ({ entries: entries.size, bytes, hits, misses }),
  };
}

/**
 * `load`'s answer for `key`, from the cache when it is there. `size` estimates an answer's bytes
 * (strings count twice: V8 may hold them as UTF-16).
 */
export async function cached<T>(
  cache: ReadCache,
  key: string,
  load: () => Promise<T>,
  size: (value: T) => number,
): Promise<T> {
  const hit = cache.get<T>(key);
  if (hit !== undefined) return hit;
  const value = await load();
  cache.set(key, value, size(value));
  return value;
}
