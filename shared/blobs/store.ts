import { retryingOnce } from "../lazy.ts";

/** Where file bodies above the blob threshold live. Keys are content-addressed, so a put is idempotent. */
export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** Removes a blob; removing one that is not there is not an error. */
  delete(key: string): Promise<void>;
}

/**
 * A store made at its first use: the Cloud Storage store imports its client library then, not
 * when the process starts (a cold start that serves no large file never loads it).
 */
export function madeOnFirstUse(make: () => Promise<BlobStore>): BlobStore {
  const store = retryingOnce(make);
  return {
    put: async (key, data) => (await store()).put(key, data),
    get: async (key) => (await store()).get(key),
    delete: async (key) => (await store()).delete(key),
  };
}
