import { randomBytes } from "node:crypto";
import http from "node:http";
import { createGunzip } from "node:zlib";
import { extract } from "tar-stream";
import { type QuireClient, quireClient } from "../client.ts";
import { analyze } from "../database.ts";
import { BULK_FILES, commit, fillerText, fixturePath, range } from "../fixtures.ts";
import { progress } from "../log.ts";
import { type QuireProcess, startQuire } from "../server.ts";

/**
 * The archive endpoint: throughput and the server's memory while it streams the `.tar.gz` of a
 * large tree. Run alone with
 * `node --import tsx -e 'import("./bench/scenarios/archive.ts").then((m) => m.main())'`
 * (it builds trees of 4 KiB files), or call measureArchive() with a running server; bench/run.ts
 * calls measureArchiveOf() on the big read fixture of its own server.
 *
 * Memory is read from /proc/<pid>/status of the server process. Its peak (VmHWM) is reset through
 * /proc/<pid>/clear_refs right before each download where the kernel allows it, so the peak is the
 * download's own and not that of building the fixture; a 10 ms VmRSS sampler runs as well, as a
 * cross-check and as the fallback. A smaller tree is measured the same way: if memory is constant
 * in the tree's size, both peaks are about the same.
 */

export interface ArchiveRun {
  files: number;
  /** Bytes of file content in the tree. */
  contentBytes: number;
  /** Bytes of the `.tar.gz`. */
  archiveBytes: number;
  seconds: number;
  /** Content MB (10^6 bytes) per second, the figure to compare. */
  contentMBps: number;
  archiveMBps: number;
  /** Server VmRSS just before the download, KiB. */
  rssBeforeKiB: number;
  /** Highest server VmRSS during the download, KiB: VmHWM after a reset, else the sampled maximum. */
  peakRssKiB: number;
  /** peakRssKiB - rssBeforeKiB. */
  growthKiB: number;
  /** "hwm" when the kernel's peak counter could be reset, "sampled" otherwise. */
  peakSource: "hwm" | "sampled";
}

/** One tree's downloads: the best (fastest) of them, with the highest peak of them all. */
export interface ArchiveTree {
  files: number;
  runs: ArchiveRun[];
  best: ArchiveRun;
  worstPeakRssKiB: number;
}

export interface ArchiveResult {
  /** Per tree size. */
  trees: ArchiveTree[];
}

export interface ArchiveOptions {
  /** A running server; without one, one is started and stopped. */
  server?: QuireProcess;
  /** Tree sizes to measure; the last is the headline (10,000 files). */
  sizes?: number[];
  /** Bytes per file (default 4 KiB of base64 text: compresses about as well as prose). */
  fileBytes?: number;
  /** Timed downloads per tree, after one untimed download that also checks the archive. */
  repeats?: number;
}

const ORG = "archive-bench";

/** Builds each tree, downloads its archive and measures the server while it streams. */
export async function measureArchive(opts: ArchiveOptions = {}): Promise<ArchiveResult> {
  const server = opts.server ?? (await startQuire());
  try {
    const q = quireClient(server.url);
    const org = `${ORG}-${randomBytes(3).toString("hex")}`;
    await q.post("/orgs", { body: { name: org } });
    const trees: ArchiveTree[] = [];
    for (const files of opts.sizes ?? [1_000, 10_000]) {
      const repo = `${org}/tree-${files}`;
      await q.post("/repos", { body: { owner: org, name: repo } });
      progress(`archive: writing ${files} files to ${repo}`);
      await writeFiles(q, repo, files, opts.fileBytes ?? 4096);
      // As autovacuum would within a minute, and as bench/run.ts does before its reads: without
      // statistics tree_page is planned far worse (docs/benchmarks.md).
      await analyze(server.databaseUrl);
      trees.push(await measureArchiveOf(server, repo, { files, repeats: opts.repeats ?? 3 }));
    }
    return { trees };
  } finally {
    if (!opts.server) await server.stop();
  }
}

/**
 * Downloads the archive of main at its head of `repo`, which must hold `files` files: once
 * untimed, walking the tar to check the entries and to add up the content bytes, then `repeats`
 * timed downloads while the server's memory is watched. bench/run.ts calls this on its own server.
 */
export async function measureArchiveOf(
  server: QuireProcess,
  repo: string,
  opts: { files: number; repeats: number },
): Promise<ArchiveTree> {
  const path = `/repos/${repo}/-/archive`;
  const check = await fetchArchive(server, path, { countEntries: true });
  if (check.entries !== opts.files)
    throw new Error(`${repo}: archive has ${check.entries} entries, not ${opts.files}`);
  const runs: ArchiveRun[] = [];
  for (let r = 0; r < opts.repeats; r++) {
    const m = await fetchArchive(server, path, { countEntries: false });
    const run = archiveRun(opts.files, check.contentBytes, m);
    progress(
      `archive: ${opts.files} files, ${(m.bytes / 1e6).toFixed(1)} MB in ${m.seconds.toFixed(2)} s ` +
        `(${run.contentMBps.toFixed(1)} MB/s of content); server RSS ${kib(run.rssBeforeKiB)} -> peak ${kib(run.peakRssKiB)} (${run.peakSource})`,
    );
    runs.push(run);
  }
  const best = runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
  return { files: opts.files, runs, best, worstPeakRssKiB: Math.max(...runs.map((r) => r.peakRssKiB)) };
}

function archiveRun(files: number, contentBytes: number, m: Fetched): ArchiveRun {
  return {
    files,
    contentBytes,
    archiveBytes: m.bytes,
    seconds: m.seconds,
    contentMBps: contentBytes / 1e6 / m.seconds,
    archiveMBps: m.bytes / 1e6 / m.seconds,
    rssBeforeKiB: m.rssBeforeKiB,
    peakRssKiB: m.peakKiB,
    growthKiB: m.peakKiB - m.rssBeforeKiB,
    peakSource: m.peakSource,
  };
}

/** A markdown table of the results. */
export function archiveTable(result: ArchiveResult): string {
  const lines = [
    "| tree | archive | best time | content MB/s | archive MB/s | server RSS before | peak while streaming | growth |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const t of result.trees) {
    const b = t.best;
    lines.push(
      `| ${t.files.toLocaleString("en")} files, ${(b.contentBytes / 1e6).toFixed(1)} MB | ${(b.archiveBytes / 1e6).toFixed(1)} MB | ` +
        `${b.seconds.toFixed(2)} s | ${b.contentMBps.toFixed(1)} | ${b.archiveMBps.toFixed(1)} | ${kib(b.rssBeforeKiB)} | ` +
        `${kib(t.worstPeakRssKiB)} (${b.peakSource}) | ${kib(t.worstPeakRssKiB - b.rssBeforeKiB)} |`,
    );
  }
  return lines.join("\n");
}

/** Files 0..files-1 (fixturePath names) of `fileBytes` each, in commits of BULK_FILES. */
async function writeFiles(q: QuireClient, repo: string, files: number, fileBytes: number): Promise<void> {
  for (let start = 0; start < files; start += BULK_FILES) {
    const batch = range(start, Math.min(files, start + BULK_FILES)).map((i) => ({
      path: fixturePath(i),
      text: fillerText(fileBytes),
    }));
    await commit(q, repo, "main", `archive bench ${start}`, batch);
  }
}

interface Fetched {
  bytes: number;
  seconds: number;
  entries: number;
  /** Bytes of file content in the tar (its entries' sizes); 0 unless `countEntries`. */
  contentBytes: number;
  rssBeforeKiB: number;
  peakKiB: number;
  peakSource: "hwm" | "sampled";
}

/**
 * Downloads `path` (DEV_IDENTITY: no token needed), counting bytes without keeping them, while
 * sampling the server's memory. With `countEntries` it also gunzips and walks the tar stream.
 * Raw node:http on purpose, not the typed client: the archive is a bytes stream measured as it
 * arrives, which a client that buffers the reply would change.
 */
async function fetchArchive(
  server: QuireProcess,
  path: string,
  opts: { countEntries: boolean },
): Promise<Fetched> {
  const hwmReset = await server.resetPeak();
  const before = await server.memory();
  let sampledPeak = before.rssKiB;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      sampledPeak = Math.max(sampledPeak, (await server.memory()).rssKiB);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const started = performance.now();
  let bytes = 0;
  let entries = 0;
  let contentBytes = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const req = http.get(server.url + path, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${path}: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on("error", reject);
        if (!opts.countEntries) {
          res.on("end", () => resolve());
          return;
        }
        const ex = extract();
        ex.on("entry", (header, stream, next) => {
          entries++;
          contentBytes += header.size ?? 0;
          stream.on("end", next);
          stream.resume();
        });
        ex.on("finish", () => resolve());
        ex.on("error", reject);
        res.pipe(createGunzip()).on("error", reject).pipe(ex);
      });
      req.on("error", reject);
    });
  } finally {
    sampling = false;
    await sampler;
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await server.memory();
  const peakKiB = hwmReset ? Math.max(after.peakKiB, sampledPeak) : sampledPeak;
  return {
    bytes,
    seconds,
    entries,
    contentBytes,
    rssBeforeKiB: before.rssKiB,
    peakKiB,
    peakSource: hwmReset ? "hwm" : "sampled",
  };
}

const kib = (k: number) => `${(k / 1024).toFixed(1)} MiB`;

/** Runs the scenario on a fresh server and prints the table. */
export async function main(): Promise<void> {
  const result = await measureArchive();
  process.stdout.write(`\n${archiveTable(result)}\n`);
}
