/**
 * `build`, run on the first call and its promise shared by every later one. A failure is not
 * kept: the next call builds again (the database or a cloud API was away for a moment).
 */
export function retryingOnce<T>(build: () => Promise<T>): () => Promise<T> {
  let built: Promise<T> | undefined;
  return () =>
    (built ??= build().catch((err: unknown) => {
      built = undefined;
      throw err;
    }));
}

/** A value built at first need, then read synchronously. */
export interface Preloaded<T> {
  /** Builds the value (once; again after a failure); every caller of `get` awaits it first. */
  load(): Promise<void>;
  /** The value; throws when `load` has not resolved yet, a caller that skipped it. */
  get(): T;
}

/**
 * For code that is synchronous but rarely needed, such as a library the web pages render with:
 * its module is imported by `await import()` in `build` (so a bundle keeps it in a chunk of its
 * own, loaded at the first `load()`), and the synchronous code reads it with `get()` once an
 * entry point above it has awaited `load()` (docs/benchmarks.md, "Where the memory goes").
 */
export function preloaded<T>(build: () => Promise<T>): Preloaded<T> {
  let value: { v: T } | undefined;
  const load = retryingOnce(async () => {
    value ??= { v: await build() };
  });
  return {
    load,
    get: () => {
      if (!value) throw new Error("used before it was loaded: await its load() first");
      return value.v;
    },
  };
}
