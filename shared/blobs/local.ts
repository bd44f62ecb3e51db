import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { BlobStore } from "./store.ts";

/** Blobs as files under one directory. Writes go to a temporary name first, so a reader never sees half a blob. */
export function localBlobStore(dir: string): BlobStore {
  const fileOf = (key: string) => path.join(dir, ...key.split("/"));
  return {
    async put(key, data) {
      const file = fileOf(key);
      await mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${randomUUID()}.tmp`;
      await writeFile(tmp, data);
      await rename(tmp, file);
    },
    get: (key) => readFile(fileOf(key)),
    delete: (key) => rm(fileOf(key), { force: true }),
  };
}
