import { randomBytes } from "node:crypto";
import { mkdtemp, rm, unlink } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256hex } from "../commits/fixtures.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { commit, errorOf, expectError, repoWithOwner, useFixture } from "../support/world.ts";
import { downloadAs } from "./fixtures.ts";

const app = useFixture(startTestApp);

describe("GET /repos/{name}/-/archive: refusals come as JSON, before any archive byte", () => {
  it("answers an unknown branch, an at beyond the head and a malformed at in the error shape", async () => {
    const fx = await repoWithOwner(app);
    const head = await commit(fx, "main", { "a.txt": "a\n" });
    const cases: [string, number, string][] = [
      ["?branch=nope", 404, "BRANCH_NOT_FOUND"],
      [`?at=${head + 1}`, 400, "SEQUENCE_OUT_OF_RANGE"],
      ["?at=abc", 400, "VALIDATION_FAILED"],
      ["?at=-1", 400, "VALIDATION_FAILED"],
      ["?branch=bad..name", 400, "VALIDATION_FAILED"],
    ];
    for (const [query, status, code] of cases) {
      const res = await fx.client.get(`${fx.base}/archive${query}`);
      expect(res.headers.get("content-type"), query).toContain("application/json");
      expectError(res, status, code);
    }
  });

  it("is 401 without credentials and with bad ones, and 404 for a stranger or a missing repo", async () => {
    const fx = await repoWithOwner(app);
    await commit(fx, "main", { "secret.txt": "s\n" });
    expectError(await app.anonymous.get(`${fx.base}/archive`), 401, "UNAUTHENTICATED");
    const badToken = await app.anonymous.raw("GET", `${fx.base}/archive`, {
      headers: { authorization: "Bearer not-a-token" },
    });
    expectError(badToken, 401, "UNAUTHENTICATED");
    const notBearer = await app.anonymous.raw("GET", `${fx.base}/archive`, {
      headers: { authorization: "Basic dXNlcjpwYXNz" },
    });
    expectError(notBearer, 401, "UNAUTHENTICATED");
    const expired = await app.anonymous.raw("GET", `${fx.base}/archive`, {
      headers: { authorization: `Bearer ${await app.idp.token(fx.owner, { expiresIn: -60 })}` },
    });
    expectError(expired, 401, "UNAUTHENTICATED");

    const stranger = app.as(`stranger-${fx.org}@example.com`);
    expectError(await stranger.get(`${fx.base}/archive`), 404, "REPO_NOT_FOUND");
    expectError(await fx.client.get(`/repos/${fx.org}/nothing/-/archive`), 404, "REPO_NOT_FOUND");
  });

  it("refuses other methods with 405", async () => {
    const fx = await repoWithOwner(app);
    const res = await fx.client.post(`${fx.base}/archive`, {});
    expect(res.status).toBe(405);
    expect(errorOf(res).code).toBe("METHOD_NOT_ALLOWED");
    expect(res.headers.get("allow")).toContain("GET");
  });
});

describe("failures after the archive has started", () => {
  let blobApp: TestApp;
  let blobDir: string;
  const logs = new PassThrough();
  const lines: string[] = [];
  logs.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));

  beforeAll(async () => {
    blobDir = await mkdtemp(path.join(tmpdir(), "quire-archive-blobs-"));
    blobApp = await startTestApp(
      { SVC_BLOB_THRESHOLD_BYTES: "1024", SVC_BLOB_LOCAL_DIR: blobDir, LOG_LEVEL: "info" },
      { logTo: logs },
    );
  });
  afterAll(async () => {
    await blobApp?.close();
    await rm(blobDir, { recursive: true, force: true });
  });

  const logged = (message: string) =>
    lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l["message"] === message);

  it("truncates the download (no JSON in the stream) and logs when a body cannot be loaded", async () => {
    const fx = await repoWithOwner(blobApp);
    const files: Record<string, Buffer> = {};
    // Enough incompressible bytes before the broken file that gzip has sent some of them.
    for (let i = 0; i < 8; i++) files[`a/${i}.bin`] = randomBytes(64 * 1024);
    const broken = randomBytes(4096);
    files["z/broken.bin"] = broken;
    await commit(fx, "main", files);
    await unlink(path.join(blobDir, "repos", String(fx.repoId), sha256hex(broken)));

    const res = await fetch(`${blobApp.url}${fx.base}/archive`, {
      headers: { authorization: `Bearer ${await blobApp.idp.token(fx.owner)}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    await expect(res.arrayBuffer()).rejects.toThrow();

    await waitFor(() => logged("archive stream failed; the download is truncated").length === 1);
    const [line] = logged("archive stream failed; the download is truncated");
    expect(line).toMatchObject({ severity: "ERROR", repo: fx.repo, branch: "main", files: 8 });
    expect(JSON.stringify(line)).toContain("ENOENT");

    // The server is fine afterwards.
    expect((await fx.client.get("/healthz")).status).toBe(200);
  });

  it("waits for a client that stops reading (backpressure), and stops producing when it hangs up", async () => {
    const fx = await repoWithOwner(blobApp);
    // 24 MiB of incompressible bytes: more than the socket buffers of both ends hold, so the
    // server must wait for the client, which stops reading and then hangs up.
    const FILES = 96;
    for (let c = 0; c < 4; c++) {
      const files: Record<string, Buffer> = {};
      for (let i = c * 24; i < (c + 1) * 24; i++)
        files[`f${String(i).padStart(2, "0")}.bin`] = randomBytes(256 * 1024);
      await commit(fx, "main", files);
    }
    const token = await blobApp.idp.token(fx.owner);
    const url = new URL(`${blobApp.url}${fx.base}/archive`);
    await new Promise<void>((resolve, reject) => {
      const req = http.get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.once("data", () => {
          res.pause();
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 300);
        });
        res.on("error", () => {});
      });
      req.on("error", (err) => {
        if (!req.destroyed) reject(err);
      });
    });
    await waitFor(() => logged("archive download aborted by the client").length === 1);
    const [line] = logged("archive download aborted by the client");
    expect(line).toMatchObject({ repo: fx.repo });
    expect(line!["files"] as number).toBeLessThan(FILES);
    expect(logged("archive streamed").filter((l) => l["repo"] === fx.repo)).toEqual([]);

    // A complete download of the same archive still works.
    const full = await downloadAs(blobApp, fx.owner, `${fx.base}/archive`);
    expect(full.status).toBe(200);
    await waitFor(() =>
      logged("archive streamed").some((l) => l["repo"] === fx.repo && l["files"] === FILES),
    );
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await sleep(20);
  }
}
