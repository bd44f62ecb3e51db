import { randomBytes } from "node:crypto";
import http from "node:http";
import { type QuireClient, quireClient } from "../client.ts";
import { withDb } from "../database.ts";
import { progress } from "../log.ts";
import type { Row } from "../report.ts";
import type { LoopDelay, QuireProcess } from "../server.ts";

/**
 * Large files (issue 9 §2): a 20 MiB file committed, read back and archived, against a plain
 * `BEGIN; INSERT 20 MiB bytea; COMMIT` through pg on the same PostgreSQL, and then four commits of
 * 30 MiB bodies at once; for each, the longest the server's event loop was held (its server must
 * run with `loopProbe`: bench/loop-probe.ts). Run alone with `npm run bench -- --only large-files`.
 */

const MiB = 1024 * 1024;
/** The headline file. */
const LARGE_FILE_BYTES = 20 * MiB;
/** A file whose commit body (base64 plus the JSON around it) is just over 30 MiB: 22.5 MiB. */
const CONCURRENT_FILE_BYTES = (30 * MiB * 3) / 4;
const CONCURRENT_COMMITS = 4;
/** Timed repetitions of the single-file commit and of the pg insert; the best of each is reported. */
const REPEATS = 3;

interface Timed {
  /** Best of the repetitions, seconds. */
  seconds: number;
  /** File MB (10^6 bytes) per second at the best time. */
  mbps: number;
}

/** How far some 30 MiB commits raised the server's peak RSS (VmHWM, reset right before them). */
export interface PeakRise {
  commits: number;
  /** MiB of each commit's body (its base64 content; the JSON around it is a few bytes). */
  bodyMiB: number;
  rssBeforeMiB: number;
  peakMiB: number;
  /** False where the kernel does not let VmHWM be reset: the rise is then not measured. */
  measured: boolean;
}

export interface LargeFilesResult {
  fileBytes: number;
  pgInsert: Timed;
  commit: Timed & { pause: LoopDelay };
  read: Timed & { pause: LoopDelay };
  archive: Timed & { pause: LoopDelay };
  concurrent: { commits: number; fileBytes: number; seconds: number; mbps: number; pause: LoopDelay };
  /** One 30 MiB commit alone, then the concurrent ones. */
  memory: { alone: PeakRise; concurrent: PeakRise };
}

/** What a commit of a 30 MiB body may add to the server's peak, in bodies (issue 22). */
export const COMMIT_PEAK_PER_BODY_TARGET = 2.5;

const ORG = "large-files";

export async function measureLargeFiles(server: QuireProcess): Promise<LargeFilesResult> {
  const q = quireClient(server.url);
  const org = `${ORG}-${randomBytes(3).toString("hex")}`;
  await q.post("/orgs", { body: { name: org } });
  const repo = `${org}/big`;
  await q.post("/repos", { body: { owner: org, name: repo } });

  const pgInsert = await measurePgInsert(server.databaseUrl, LARGE_FILE_BYTES);
  progress(`large files: pg INSERT of 20 MiB in ${ms(pgInsert.seconds)}`);
  const commit = await paused(server, () =>
    best(REPEATS, LARGE_FILE_BYTES, () => commitFile(q, repo, "big/file.bin", randomBytes(LARGE_FILE_BYTES))),
  );
  progress(
    `large files: commit of 20 MiB in ${ms(commit.seconds)}, longest pause ${commit.pause.maxMs.toFixed(0)} ms`,
  );
  const read = await paused(server, () =>
    best(REPEATS, LARGE_FILE_BYTES, () =>
      q.get("/repos/:repo*/-/file/:path*", { params: { repo, path: "big/file.bin" } }),
    ),
  );
  const archive = await paused(server, () =>
    best(REPEATS, LARGE_FILE_BYTES, () => drain(`${server.url}/repos/${repo}/-/archive`)),
  );
  // A client of its own: the keep-alive sockets of the first may have idled past the server's
  // keep-alive timeout during the archive phase, and a 30 MiB write on one it is closing fails.
  const fresh = quireClient(server.url);
  const alone = await peakRise(server, 1, () =>
    commitFile(fresh, repo, "big/alone.bin", randomBytes(CONCURRENT_FILE_BYTES)),
  );
  const atOnce = await peakRise(server, CONCURRENT_COMMITS, () =>
    paused(server, () => concurrentCommits(fresh, repo)),
  );
  const concurrent = atOnce.result;
  progress(
    `large files: ${CONCURRENT_COMMITS} concurrent commits in ${ms(concurrent.seconds)}, longest pause ${concurrent.pause.maxMs.toFixed(0)} ms`,
  );
  const memory = { alone: alone.rise, concurrent: atOnce.rise };
  return { fileBytes: LARGE_FILE_BYTES, pgInsert, commit, read, archive, concurrent, memory };
}

/** `work` (`commits` commits of a 30 MiB body) with how far it raised the server's peak RSS. */
async function peakRise<T>(
  server: QuireProcess,
  commits: number,
  work: () => Promise<T>,
): Promise<{ result: T; rise: PeakRise }> {
  const measured = await server.resetPeak();
  const before = await server.memory();
  const result = await work();
  const after = await server.memory();
  const bodyMiB = (Math.ceil(CONCURRENT_FILE_BYTES / 3) * 4) / MiB;
  const rise = {
    commits,
    bodyMiB,
    rssBeforeMiB: before.rssKiB / 1024,
    peakMiB: after.peakKiB / 1024,
    measured,
  };
  return { result, rise };
}

/** `work` with the server's longest event-loop pause while it ran. */
async function paused<T>(server: QuireProcess, work: () => Promise<T>): Promise<T & { pause: LoopDelay }> {
  await server.loopDelay(); // starts the probe's window over
  const result = await work();
  const pause = await server.loopDelay();
  if (!pause) throw new Error("the large-files scenario needs a server started with loopProbe");
  return { ...result, pause };
}

async function best(repeats: number, bytes: number, once: () => Promise<unknown>): Promise<Timed> {
  let seconds = Number.POSITIVE_INFINITY;
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    await once();
    seconds = Math.min(seconds, (performance.now() - started) / 1000);
  }
  return { seconds, mbps: bytes / 1e6 / seconds };
}

async function commitFile(q: QuireClient, repo: string, path: string, data: Buffer): Promise<void> {
  await q.post("/repos/:repo*/-/commit", {
    params: { repo },
    body: {
      branch: "main",
      message: `${data.length} bytes`,
      files: [{ path, content: data.toString("base64") }],
    },
  });
}

async function concurrentCommits(q: QuireClient, repo: string) {
  const files = Array.from({ length: CONCURRENT_COMMITS }, () => randomBytes(CONCURRENT_FILE_BYTES));
  const started = performance.now();
  await Promise.all(files.map((data, i) => commitFile(q, repo, `big/concurrent-${i}.bin`, data)));
  const seconds = (performance.now() - started) / 1000;
  const bytes = CONCURRENT_COMMITS * CONCURRENT_FILE_BYTES;
  return {
    commits: CONCURRENT_COMMITS,
    fileBytes: CONCURRENT_FILE_BYTES,
    seconds,
    mbps: bytes / 1e6 / seconds,
  };
}

/**
 * GETs `url` (the bench server runs with DEV_IDENTITY: no credentials) and discards the body. Raw on
 * purpose: the archive is a bytes stream, measured as it arrives rather than buffered by a client.
 */
function drain(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET ${url}: HTTP ${res.statusCode}`));
        res.on("data", () => {});
        res.on("end", resolve);
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

// The yardstick: the same bytes written by PostgreSQL alone, one transaction through pg.
const large_table_create = `CREATE TABLE IF NOT EXISTS bench_large (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, data bytea NOT NULL)`;
const large_row_insert = `INSERT INTO bench_large (data) VALUES ($1)`;
const large_table_drop = `DROP TABLE IF EXISTS bench_large`;

async function measurePgInsert(databaseUrl: string, bytes: number): Promise<Timed> {
  return withDb(databaseUrl, async (db) => {
    await db.query(large_table_create);
    try {
      return await best(REPEATS, bytes, async () => {
        const data = randomBytes(bytes);
        await db.query("BEGIN");
        await db.query(large_row_insert, [data]);
        await db.query("COMMIT");
      });
    } finally {
      await db.query(large_table_drop);
    }
  });
}

const ms = (seconds: number) => `${(seconds * 1000).toFixed(0)} ms`;
const pauseText = (p: LoopDelay) => `longest event-loop pause ${p.maxMs.toFixed(0)} ms`;

/** The rows of the results table (docs/benchmarks.md describes them). */
export function largeFileRows(r: LargeFilesResult): Row[] {
  const mb = (t: Timed) => `${ms(t.seconds)}, ${t.mbps.toFixed(0)} MB/s`;
  const c = r.concurrent;
  return [
    { scenario: "Large file: pg BEGIN; INSERT 20 MiB bytea; COMMIT", result: mb(r.pgInsert), errors: 0 },
    {
      scenario: "Large file: commit one 20 MiB file",
      result: `${mb(r.commit)}; ${pauseText(r.commit.pause)}`,
      ratio: r.commit.mbps / r.pgInsert.mbps,
      ratioOf: "pg INSERT MB/s",
      errors: 0,
    },
    {
      scenario: "Large file: read it back (GET file, JSON)",
      result: `${mb(r.read)}; ${pauseText(r.read.pause)}`,
      errors: 0,
    },
    {
      scenario: "Large file: archive holding it (.tar.gz)",
      result: `${mb(r.archive)}; ${pauseText(r.archive.pause)}`,
      errors: 0,
    },
    {
      scenario: `Large files: ${c.commits} concurrent commits of 30 MiB bodies (${(c.fileBytes / MiB).toFixed(1)} MiB files)`,
      result: `${ms(c.seconds)} for all, ${c.mbps.toFixed(0)} MB/s; ${pauseText(c.pause)}`,
      errors: 0,
    },
    peakRow(r.memory.alone),
    peakRow(r.memory.concurrent),
  ];
}

/** The rise of the server's peak RSS over its RSS before the commits, per body. */
function peakRow(p: PeakRise): Row {
  const what = p.commits === 1 ? "one commit" : `${p.commits} commits at once`;
  const scenario = `Large files: server peak RSS (VmHWM), ${what} of a ${p.bodyMiB.toFixed(0)} MiB body`;
  if (!p.measured) return { scenario, result: "not measured: VmHWM cannot be reset here", errors: 0 };
  const perBody = (p.peakMiB - p.rssBeforeMiB) / p.commits / p.bodyMiB;
  return {
    scenario,
    result: `${p.rssBeforeMiB.toFixed(0)} MiB before, ${p.peakMiB.toFixed(0)} MiB peak`,
    ratio: perBody,
    ratioOf: "body size, per commit (the rise of the peak)",
    target: `<= ${COMMIT_PEAK_PER_BODY_TARGET}x`,
    met: perBody <= COMMIT_PEAK_PER_BODY_TARGET,
    errors: 0,
  };
}
