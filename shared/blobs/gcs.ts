import { Storage } from "@google-cloud/storage";
import type { BlobStore } from "./store.ts";

/**
 * A Cloud Storage client: Google's endpoint and credentials, or an emulator's base URL (the
 * validated STORAGE_EMULATOR_HOST, see config.ts), which needs no credentials.
 */
export function storageClient(emulatorUrl?: string): Storage {
  if (!emulatorUrl) return new Storage();
  const storage = new Storage({ apiEndpoint: emulatorUrl });
  // @google-cloud/storage v7 takes the JSON API base from process.env.STORAGE_EMULATOR_HOST
  // verbatim, without the /storage/v1 that GCS and fake-gcs-server serve it under: uploads work,
  // downloads 404 (googleapis/nodejs-storage#1314). Pin it to the configured value instead.
  storage.baseUrl = `${emulatorUrl}/storage/v1`;
  return storage;
}

/**
 * Blobs as objects in a Cloud Storage bucket. A put that finds the object already there is a
 * success: keys are content hashes, so the bytes are the same, and ifGenerationMatch=0 (create
 * only) spares rewriting them.
 */
export function gcsBlobStore(bucketName: string, storage: Storage): BlobStore {
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
    async delete(key) {
      await bucket.file(key).delete({ ignoreNotFound: true });
    },
  };
}
