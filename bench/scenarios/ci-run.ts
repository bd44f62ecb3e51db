import { execFileSync } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { createLogger } from "../../shared/log.ts";
import { pushBusyboxImage, startRegistry } from "../../test/support/oci-registry.ts";
import { unpackArchive } from "../../worker/archive/unpack.ts";
import { createCheckRunner } from "../../worker/check/runner.ts";
import type { RunCheck } from "../../worker/check/types.ts";
import type { WorkerConfig } from "../../worker/config.ts";
import { DEFAULT_IMAGE_LIMITS } from "../../worker/image/layers.ts";
import { runLoop } from "../../worker/loop.ts";
import { quireClient } from "../client.ts";
import { commit, createOrg, createRepo, fillerText } from "../fixtures.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";
import type { QuireProcess } from "../server.ts";

/**
 * `npm run bench -- --only ci-run`: the real worker (in the bench's process, on the real
 * bubblewrap runner and a registry on 127.0.0.1) against a Quire started for CI.
 *
 * 1. Commit to check run reported passed, for a one-step check (`true`), one commit at a time:
 *    p50/p99 of the whole, split into claim (commit response → claim answer, the worker polling
 *    every 5 ms), archive (claim → the check starts: job JWT, presign, download and unpack, the
 *    configuration read, pending), image (the runner's time outside its steps: image from the
 *    digest cache, the /src copy, sandbox set-up), run (the step's own time, as the runner logs
 *    it) and report (log upload, the final check run, complete).
 * 2. Archive download-and-unpack MB/s (content bytes per second) of the worker's unpacker against
 *    `tar -xzf` of the same archive file, in the same run.
 */

const SAMPLES = 20;
const WARMUP = 2;
const ARCHIVE_FILES = 400;
const ARCHIVE_FILE_BYTES = 32 * 1024;
const UNPACK_REPEATS = 5;

interface Sample {
  claim: number;
  archive: number;
  image: number;
  run: number;
  report: number;
  total: number;
}

/** A logger that notes when each message was logged (performance.now()), and drops the lines. */
function timedLog() {
  const seen = new Map<string, number>();
  const log = createLogger(
    { format: "json", level: "info" },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) {
          const message = (JSON.parse(line) as { message?: string }).message ?? "";
          if (!seen.has(message)) seen.set(message, performance.now());
        }
        done();
      },
    }),
  );
  return { log, at: (message: string) => seen.get(message) ?? Number.NaN, reset: () => seen.clear() };
}

export async function measureCiRun(server: QuireProcess): Promise<string> {
  if (!server.workerToken) throw new Error("ci-run needs a server started with CI on");
  const registry = await startRegistry();
  const work = await mkdtemp(path.join(tmpdir(), "quire-bench-ci-run-"));
  try {
    const image = (await pushBusyboxImage(registry.host)).ref;
    const q = quireClient(server.url);
    await createOrg(q);
    const repo = await createRepo(q, "worker");
    const yaml = `checks:\n  - name: bench/true\n    image: ${image}\n    steps: ["true"]\n`;
    await commit(q, repo, "main", "CI", [{ path: ".svc/ci.yaml", text: yaml }]);

    const config: WorkerConfig = {
      schedulerUrl: server.url,
      credential: { kind: "static", token: server.workerToken },
      jobAudience: "quire",
      insecureRegistries: [registry.host],
      dockerConfigPath: undefined,
      network: "none",
      checkTimeoutMs: 60_000,
      logCapBytes: 1024 * 1024,
      pollIntervalMs: 5,
      heartbeatIntervalMs: 30_000,
      shutdownGraceMs: 0,
      cacheDir: path.join(work, "cache"),
      workDir: work,
      archive: { maxBytes: 1024 ** 3, maxFiles: 100_000 },
      image: DEFAULT_IMAGE_LIMITS,
      log: { format: "json", level: "info" },
    };
    const runner = createCheckRunner({ cacheDir: config.cacheDir, insecureRegistries: [registry.host] });
    const timing = timedLog();
    let checkStart = 0;
    let checkEnd = 0;
    let stepMs = 0;
    const runCheck: RunCheck = async (input) => {
      checkStart = performance.now();
      const result = await runner(input);
      checkEnd = performance.now();
      stepMs = [...result.log.toString().matchAll(/<== step \d+ exited 0 in ([\d.]+)(ms|s)/g)].reduce(
        (sum, m) => sum + Number(m[1]) * (m[2] === "s" ? 1000 : 1),
        0,
      );
      if (result.conclusion !== "passed") throw new Error(`the check failed: ${result.log.toString()}`);
      return result;
    };

    // Each sample: a commit, then the worker claiming until it has run that commit's job.
    const never = new AbortController().signal;
    const samples: Sample[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      timing.reset();
      await commit(q, repo, "main", `sample ${i}`, [{ path: "notes.md", text: `sample ${i}\n` }]);
      const committed = performance.now();
      for (;;) {
        const [outcome] = await runLoop({
          config,
          runCheck,
          log: timing.log,
          once: true,
          drain: never,
          abandon: never,
        });
        if (outcome) {
          if (outcome.status !== "passed") throw new Error(`job ${outcome.status}: ${outcome.error}`);
          break;
        }
        await new Promise((r) => setTimeout(r, config.pollIntervalMs));
      }
      const done = performance.now();
      const claimed = timing.at("job claimed");
      if (i < WARMUP) continue;
      samples.push({
        claim: claimed - committed,
        archive: checkStart - claimed,
        image: checkEnd - checkStart - stepMs,
        run: stepMs,
        report: done - checkEnd,
        total: done - committed,
      });
    }
    progress(`ci-run: ${SAMPLES} commits run to a passed check`);

    const archiveRows = await measureUnpack(q, repo, server.url, work);
    return [latencyTable(samples), "", archiveRows].join("\n");
  } finally {
    await registry.close();
    await rm(work, { recursive: true, force: true });
  }
}

function latencyTable(samples: Sample[]): string {
  const rows = (["total", "claim", "archive", "image", "run", "report"] as const).map((k) => {
    const sorted = samples.map((s) => s[k]).sort((a, b) => a - b);
    return `| ${k === "total" ? "**commit → check passed**" : k} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} |`;
  });
  return [`| Phase (${samples.length} commits) | p50 ms | p99 ms |`, "|---|---:|---:|", ...rows].join("\n");
}

/** The worker's unpacker against `tar -xzf`, on one archive of ARCHIVE_FILES files. */
async function measureUnpack(
  q: ReturnType<typeof quireClient>,
  repo: string,
  url: string,
  work: string,
): Promise<string> {
  for (let c = 0; c < ARCHIVE_FILES; c += 100) {
    const files = Array.from({ length: 100 }, (_, i) => ({
      path: `data/f${c + i}.txt`,
      text: fillerText(ARCHIVE_FILE_BYTES),
    }));
    await commit(q, repo, "main", `data ${c}`, files);
  }
  // Raw fetch on purpose: the archive is the bytes a worker downloads and unpacks as a stream.
  const archiveUrl = `${url}/repos/${repo}/-/archive?branch=main`;
  const file = path.join(work, "archive.tar.gz");
  await writeFile(file, Buffer.from(await (await fetch(archiveUrl)).arrayBuffer()));
  const mb = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const runs = { download: [] as number[], file: [] as number[], tar: [] as number[] };
  let bytes = 0;
  for (let r = 0; r < UNPACK_REPEATS; r++) {
    const fresh = async () => {
      const dir = path.join(work, `unpack-${r}-${Math.random().toString(36).slice(2)}`);
      await mkdir(dir);
      return dir;
    };
    let dir = await fresh();
    let t = performance.now();
    const res = await fetch(archiveUrl);
    const stats = await unpackArchive(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), dir, {
      maxBytes: 1024 ** 3,
      maxFiles: 100_000,
    });
    runs.download.push(performance.now() - t);
    bytes = stats.bytes;
    dir = await fresh();
    t = performance.now();
    await unpackArchive(createReadStream(file), dir, { maxBytes: 1024 ** 3, maxFiles: 100_000 });
    runs.file.push(performance.now() - t);
    dir = await fresh();
    t = performance.now();
    execFileSync("tar", ["-xzf", file, "-C", dir]);
    runs.tar.push(performance.now() - t);
  }
  const tar = mb(bytes, median(runs.tar));
  const row = (what: string, ms: number) =>
    `| ${what} | ${median([ms]).toFixed(1)} | ${mb(bytes, ms).toFixed(1)} | ${(mb(bytes, ms) / tar).toFixed(2)}x |`;
  return [
    `| Archive of ${ARCHIVE_FILES} files, ${(bytes / 1e6).toFixed(1)} MB of content (median of ${UNPACK_REPEATS}) | ms | MB/s | vs tar -xzf |`,
    "|---|---:|---:|---:|",
    row("worker: download and unpack (HTTP stream)", median(runs.download)),
    row("worker: unpack the downloaded file", median(runs.file)),
    row("`tar -xzf` of the same file", median(runs.tar)),
  ].join("\n");
}
