import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltFunction, buildFunctions } from "../../scripts/build.ts";
import { FUNCTION_ENV } from "../../scripts/bundle-options.ts";
import {
  type BundleProcess,
  firstAnswer,
  linkDependencies,
  memoryKiB,
  startBundle,
} from "../../scripts/bundle-process.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { type RepoHandle, world } from "../support/world.ts";
import { MEASURED_BODY_MIB, REPOS_COMMIT_MIB, REPOS_STARTED_MIB } from "./memory-budget.ts";

/**
 * What one large commit costs the deployed `repos` function (docs/deploy.md, "Memory of the repos
 * function"): the built bundle on plain Node, a 30 MiB commit body, then the file read back. The
 * bounds (./memory-budget.ts) are what terraform's memory and concurrency are computed from.
 */

/** The file: its base64 makes a body of MEASURED_BODY_MIB (30 MiB). */
const FILE_BYTES = (MEASURED_BODY_MIB * 1024 * 1024 * 3) / 4;
/** Commits sent at once. */
const AT_ONCE = 3;

let workDir: string;
let repos: BuiltFunction;
let app: TestApp;
let repo: RepoHandle;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "quire-repos-memory-"));
  const built = await buildFunctions(path.join(workDir, "functions"));
  const found = built.find((b) => b.target === "repos");
  if (!found) throw new Error("no repos function was built");
  repos = found;
  await linkDependencies(workDir, Object.keys(repos.dependencies));
  app = await startTestApp({ SVC_BLOB_LOCAL_DIR: path.join(workDir, "blobs") });
  repo = await world(app).repo();
});

afterAll(async () => {
  await app?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const MiB = 1024 * 1024;

describe("the built repos function's memory", () => {
  it(`starts under ${REPOS_STARTED_MIB} MiB and adds under ${REPOS_COMMIT_MIB} MiB of peak RSS for a 30 MiB commit and its read-back`, {
    timeout: 180_000,
  }, async () => {
    const proc = await startBundle(repos.dir, "repos", bundleEnv());
    try {
      const token = await app.idp.token(repo.owner);
      const auth = { authorization: `Bearer ${token}` };
      // Warm: the context, the pool and the code paths of a commit and a read, with a small file.
      const small = await commitFile(proc, auth, "warm.md", Buffer.from("# warm\n"));
      expect(small.status, await small.clone().text()).toBe(201);
      await readBack(proc, auth, "warm.md");
      const before = await memoryKiB(proc.child.pid ?? 0);

      // Several at once, as an instance serves them: what one request holds adds up.
      const files = Array.from({ length: AT_ONCE }, (_, i) => ({
        name: `large-${i}.bin`,
        data: randomBytes(FILE_BYTES),
      }));
      const answers = await Promise.all(files.map((f) => commitFile(proc, auth, f.name, f.data)));
      for (const res of answers)
        expect(res.status, `${await res.clone().text()}\n${proc.output()}`).toBe(201);
      const back = await Promise.all(files.map((f) => readBack(proc, auth, f.name)));
      for (const [i, f] of files.entries()) expect(back[i]?.equals(f.data), f.name).toBe(true);

      const after = await memoryKiB(proc.child.pid ?? 0);
      const increaseMiB = (after.peakKiB - before.peakKiB) / 1024 / AT_ONCE;
      console.info(
        `repos bundle: started ${(before.peakKiB / 1024).toFixed(0)} MiB peak, ` +
          `after ${AT_ONCE} files of ${(FILE_BYTES / MiB).toFixed(1)} MiB committed at once and read back ` +
          `${(after.peakKiB / 1024).toFixed(0)} MiB peak (+${increaseMiB.toFixed(0)} MiB a request)`,
      );
      expect(before.peakKiB / 1024).toBeLessThan(REPOS_STARTED_MIB);
      expect(increaseMiB).toBeLessThan(REPOS_COMMIT_MIB);
    } finally {
      await proc.stop();
    }
  });
});

describe("the built repos function's JSON bodies", () => {
  it("refuses, as the local server does, bytes that are not UTF-8 and a byte-order mark, which the framework lets through", {
    timeout: 120_000,
  }, async () => {
    const proc = await startBundle(repos.dir, "repos", bundleEnv());
    try {
      const auth = { authorization: `Bearer ${await app.idp.token(repo.owner)}` };
      const json = JSON.stringify({
        branch: "main",
        message: "m\u00e9",
        files: [{ path: "a.md", content: "" }],
      });
      const notUtf8 = Buffer.from(json.replace("m\u00e9", "m\u00e9"), "latin1"); // é as one byte, 0xE9
      const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
      for (const body of [notUtf8, withBom]) {
        const res = await firstAnswer(proc, `/repos/${repo.repo}/-/commit`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body,
        });
        expect(res.status, proc.output()).toBe(400);
        expect(((await res.json()) as { code: string }).code).toBe("MALFORMED_JSON");
      }
    } finally {
      await proc.stop();
    }
  });
});

describe("the built repos function's large JSON bodies, read before the framework's parsers", () => {
  it("answers and refuses them as the local server does", { timeout: 120_000 }, async () => {
    const proc = await startBundle(repos.dir, "repos", bundleEnv());
    try {
      const auth = { authorization: `Bearer ${await app.idp.token(repo.owner)}` };
      const content = randomBytes(2 * MiB).toString("base64");
      const commit = (extra: Record<string, unknown>) =>
        JSON.stringify({
          branch: "main",
          message: "large",
          files: [{ path: "large.bin", content }],
          ...extra,
        });
      const send = (body: Buffer) =>
        firstAnswer(proc, `/repos/${repo.repo}/-/commit`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body,
        });
      const refusals: [Buffer, number, string][] = [
        [Buffer.from(commit({ unknown: 1 })), 400, "VALIDATION_FAILED"],
        [Buffer.from(`${commit({}).slice(0, -1)},}`), 400, "MALFORMED_JSON"],
        [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(commit({}))]), 400, "MALFORMED_JSON"],
        [Buffer.from(commit({ message: "m\u00e9" }), "latin1"), 400, "MALFORMED_JSON"],
      ];
      for (const [body, status, code] of refusals) {
        const res = await send(body);
        expect(res.status, proc.output()).toBe(status);
        expect(((await res.json()) as { code: string }).code).toBe(code);
      }
      const res = await send(Buffer.from(commit({})));
      expect(res.status, `${await res.clone().text()}\n${proc.output()}`).toBe(201);
      const back = await readBack(proc, auth, "large.bin");
      expect(back.toString("base64")).toBe(content);
    } finally {
      await proc.stop();
    }
  });
});

function bundleEnv(): Record<string, string> {
  return {
    DATABASE_URL: app.databaseUrl,
    OIDC_ISSUER: app.idp.issuer,
    LOG_LEVEL: "error",
    SVC_DATA_DIR: path.join(workDir, "data"),
    SVC_BLOB_LOCAL_DIR: path.join(workDir, "blobs"),
    SVC_CI_LOG_DIR: path.join(workDir, "ci-logs"),
    ...FUNCTION_ENV,
  };
}

function commitFile(proc: BundleProcess, auth: Record<string, string>, file: string, data: Buffer) {
  const body = JSON.stringify({
    branch: "main",
    message: `add ${file}`,
    files: [{ path: file, content: data.toString("base64") }],
  });
  return firstAnswer(proc, `/repos/${repo.repo}/-/commit`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body,
  });
}

async function readBack(proc: BundleProcess, auth: Record<string, string>, file: string): Promise<Buffer> {
  const res = await fetch(`${proc.url}/repos/${repo.repo}/-/file/${file}`, { headers: auth });
  expect(res.status).toBe(200);
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json")) {
    const json = (await res.json()) as { content: string };
    return Buffer.from(json.content, "base64");
  }
  return Buffer.from(await res.arrayBuffer());
}
