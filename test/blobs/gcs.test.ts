import { randomBytes } from "node:crypto";
import { Storage } from "@google-cloud/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gcsBlobStore, storageClient } from "../../shared/blobs/gcs.ts";
import { loadConfig } from "../../shared/config.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { startFakeGcs } from "../support/fake-gcs.ts";
import { useFixture } from "../support/world.ts";
import { binary, commitFiles, contentRows, newRepo, readFileBack, sha256hex } from "./fixtures.ts";

/** The test's own view of the emulator, independent of the code under test. */
let admin: Storage;
const gcs = useFixture(startFakeGcs);
beforeAll(async () => {
  admin = new Storage({ apiEndpoint: gcs.url, projectId: "test" });
});

/** A new, empty bucket, so tests never see one another's objects. */
async function newBucket(): Promise<string> {
  const name = `quire-${randomBytes(6).toString("hex")}`;
  await admin.createBucket(name);
  return name;
}

const objectNames = async (bucket: string) =>
  (await admin.bucket(bucket).getFiles())[0].map((f) => f.name).sort();

const generationOf = async (bucket: string, key: string) =>
  (await admin.bucket(bucket).file(key).getMetadata())[0].generation;

describe("gcsBlobStore on fake-gcs-server", () => {
  it("stores binary bytes as an object under the key and reads them back exactly", async () => {
    const bucket = await newBucket();
    const store = gcsBlobStore(bucket, storageClient(gcs.url));
    const data = binary(3000);
    await store.put("repos/1/abc", data);
    expect(await objectNames(bucket)).toEqual(["repos/1/abc"]);
    expect((await admin.bucket(bucket).file("repos/1/abc").download())[0].equals(data)).toBe(true);
    expect((await store.get("repos/1/abc")).equals(data)).toBe(true);
  });

  it("takes a second put of the same key as success without rewriting the object", async () => {
    const bucket = await newBucket();
    const store = gcsBlobStore(bucket, storageClient(gcs.url));
    const data = binary(100);
    await store.put("k", data);
    const first = await generationOf(bucket, "k");
    // Resolves only because the adapter treats the emulator's 412 (ifGenerationMatch=0) as success.
    await expect(store.put("k", data)).resolves.toBeUndefined();
    expect(await generationOf(bucket, "k")).toBe(first);
    expect((await store.get("k")).equals(data)).toBe(true);
  });

  it("rejects a get of a missing key with the 404", async () => {
    const store = gcsBlobStore(await newBucket(), storageClient(gcs.url));
    await expect(store.get("repos/1/missing")).rejects.toMatchObject({ code: 404 });
  });

  it("still downloads when STORAGE_EMULATOR_HOST is in process.env, as in a deployment", async () => {
    // The client library reads process.env itself and would drop /storage/v1 from downloads.
    const bucket = await newBucket();
    const saved = process.env["STORAGE_EMULATOR_HOST"];
    const hostPort = new URL(gcs.url).host; // the bare form the Go client documents
    process.env["STORAGE_EMULATOR_HOST"] = hostPort;
    try {
      const config = loadConfig({ STORAGE_EMULATOR_HOST: hostPort });
      const store = gcsBlobStore(bucket, storageClient(config.STORAGE_EMULATOR_HOST));
      await store.put("k", Buffer.from("deployed"));
      expect((await store.get("k")).toString()).toBe("deployed");
    } finally {
      if (saved === undefined) delete process.env["STORAGE_EMULATOR_HOST"];
      else process.env["STORAGE_EMULATOR_HOST"] = saved;
    }
  });
});

describe("Quire with SVC_BLOB_STORE=gcs", () => {
  let app: TestApp;
  let bucket: string;
  beforeAll(async () => {
    bucket = await newBucket();
    app = await startTestApp({
      SVC_BLOB_STORE: "gcs",
      SVC_BLOB_BUCKET: bucket,
      SVC_BLOB_THRESHOLD_BYTES: "1024",
      STORAGE_EMULATOR_HOST: gcs.url,
    });
  });
  afterAll(() => app?.close());

  it("keeps a file above the threshold in the bucket and a small one in the database", async () => {
    const repo = await newRepo(app);
    const large = binary(5000);
    const small = Buffer.from("# small\n");
    await commitFiles(repo, { "assets/large.bin": large, "small.md": small });

    for (const [path, data] of [
      ["assets/large.bin", large],
      ["small.md", small],
    ] as const) {
      const back = await readFileBack(repo, path);
      expect(back.data.equals(data), path).toBe(true);
      expect(back.versionId).toBe(sha256hex(data));
    }
    const largeKey = `repos/${repo.id}/${sha256hex(large)}`;
    expect(await objectNames(bucket)).toEqual([largeKey]);
    expect(await contentRows(app, repo)).toEqual(
      [
        { sha: sha256hex(large), blob_key: largeKey, inline: false },
        { sha: sha256hex(small), blob_key: null, inline: true },
      ].sort((a, b) => a.sha.localeCompare(b.sha)),
    );
  });
});
