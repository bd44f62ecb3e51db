import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import { useFixture } from "../support/world.ts";
import { binary, commitFiles, contentRows, newRepo, type Repo, readFileBack, sha256hex } from "./fixtures.ts";

const THRESHOLD = 1024;

/** The temporary SVC_BLOB_LOCAL_DIR that startTestApp gave this app. */
let blobDir: string;
const app = useFixture(() => startTestApp({ SVC_BLOB_THRESHOLD_BYTES: String(THRESHOLD) }));
beforeAll(async () => {
  blobDir = app.server.ctx.config.SVC_BLOB_LOCAL_DIR;
});

const repoDir = (repo: Repo) => path.join(blobDir, "repos", String(repo.id));

/** The files in the repo's folder of the blob directory: one per stored body, named by its SHA-256. */
const blobFiles = async (repo: Repo) => (await readdir(repoDir(repo)).catch(() => [])).sort();

describe("the local blob store", () => {
  it("puts a file above the threshold in SVC_BLOB_LOCAL_DIR and reads it back exactly", async () => {
    const repo = await newRepo(app);
    const large = binary(5000);
    await commitFiles(repo, { "big.bin": large, "small.md": Buffer.from("small\n") });

    const sha = sha256hex(large);
    expect(await blobFiles(repo)).toEqual([sha]);
    expect((await readFile(path.join(repoDir(repo), sha))).equals(large)).toBe(true);
    const back = await readFileBack(repo, "big.bin");
    expect(back.data.equals(large)).toBe(true);
    expect(back.versionId).toBe(sha);
    expect((await readFileBack(repo, "small.md")).data.toString()).toBe("small\n");
  });

  it("keeps a file of exactly the threshold inline: only larger files go to the store", async () => {
    const repo = await newRepo(app);
    const atLimit = randomBytes(THRESHOLD);
    const over = randomBytes(THRESHOLD + 1);
    await commitFiles(repo, { "at.bin": atLimit, "over.bin": over });

    expect(await blobFiles(repo)).toEqual([sha256hex(over)]);
    expect((await readFileBack(repo, "at.bin")).data.equals(atLimit)).toBe(true);
    expect((await readFileBack(repo, "over.bin")).data.equals(over)).toBe(true);
  });

  it("stores identical content committed twice at two paths once", async () => {
    const repo = await newRepo(app);
    const large = binary(3000);
    await commitFiles(repo, { "one/copy.bin": large });
    await commitFiles(repo, { "two/copy.bin": large });

    const sha = sha256hex(large);
    expect(await contentRows(app, repo)).toEqual([
      { sha, blob_key: `repos/${repo.id}/${sha}`, inline: false },
    ]);
    expect(await blobFiles(repo)).toEqual([sha]);
    for (const p of ["one/copy.bin", "two/copy.bin"]) {
      const back = await readFileBack(repo, p);
      expect(back.data.equals(large), p).toBe(true);
      expect(back.versionId).toBe(sha);
    }
  });
});
