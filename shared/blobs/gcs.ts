import { Storage } from "@google-cloud/storage";
import type { BlobStore } from "./store.ts";

/**
 * Blobs as objects in a Cloud Storage bucket. The client honours STORAGE_EMULATOR_HOST, which the
 * tests point at fake-gcs-server. A put that finds the object already there is a success: keys are
 * content hashes, so the bytes are the same.
 */
export function gcsBlobStore(bucketName: string, storage: Storage = new Storage()): BlobStore {
  const bucket = storage.bucket(bucketName);
  return {
    async put(key, data) {
      try {
        await bucket.file(key).save(data, { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } });
      } catch (err) {
        if ((err as { code?: number }).code !== 412) throw err;
      }
    },
    async get(key) {
      const [data] = await bucket.file(key).download();
      return data;
    },
  };
}
