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
