/** Where file bodies above the blob threshold live. Keys are content-addressed, so a put is idempotent. */
export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer>;
  /** Removes a blob; removing one that is not there is not an error. */
  delete(key: string): Promise<void>;
}
