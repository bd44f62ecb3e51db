import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readIndex } from "../../cli/workcopy/meta.ts";
import { listFiles, scan, sha256Hex } from "../../cli/workcopy/scan.ts";
import { quireClient } from "../client.ts";
import { BULK_FILES, commit, createOrg, createRepo, fillerText, fixturePath } from "../fixtures.ts";
import { progress } from "../log.ts";
import type { Row } from "../report.ts";
import type { QuireProcess } from "../server.ts";

/**
 * The working copy (issue 13 §6): `quire clone` and `quire status` of a 10,000-file repo and
 * `quire commit` of 1,000 changed files, each a real `quire` child process against the bench's
 * server (DEV_IDENTITY: no token). Status is set against a bare walk of the same folder that
 * reads and hashes every file, in this process, in the same run. Run alone with
 * `npm run bench -- --only workcopy`.
 */

const FILES = 10_000;
const CHANGED = 1_000;
const FILE_BYTES = 4096;
const CLI = path.resolve(import.meta.dirname, "../../cli/bin.ts");

/** Seconds `quire <args>` took in `cwd`, failing the run on a non-zero exit. */
function timedQuire(server: string, cwd: string, args: string[]): Promise<number> {
  const env = { PATH: process.env["PATH"] ?? "", HOME: cwd, QUIRE_SERVER: server, NO_COLOR: "1" };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env, maxBuffer: 64 << 20 }, (err, _out, stderr) => {
      if (err) reject(new Error(`quire ${args.join(" ")}: ${stderr}`));
      else resolve((performance.now() - started) / 1000);
    });
  });
}

/** Lists every file under `root` and hashes each: what any status must at least do once. */
async function bareWalk(root: string): Promise<number> {
  const started = performance.now();
  for (const rel of await listFiles(root)) sha256Hex(readFileSync(path.join(root, rel)));
  return (performance.now() - started) / 1000;
}

const s = (seconds: number) => `${seconds.toFixed(2)} s`;

export async function measureWorkcopy(server: QuireProcess): Promise<Row[]> {
  const q = quireClient(server.url);
  await createOrg(q);
  const repo = await createRepo(q, "workcopy");
  progress(`workcopy: writing ${FILES} files`);
  // 4 KiB per file, as the archive scenario: tiny files would make hashing free and hide it.
  for (let c = 0; c < FILES / BULK_FILES; c++) {
    const files = Array.from({ length: BULK_FILES }, (_, k) => c * BULK_FILES + k);
    await commit(
      q,
      repo,
      "main",
      `bulk ${c + 1}`,
      files.map((i) => ({ path: fixturePath(i), text: fillerText(FILE_BYTES) })),
    );
  }
  const dir = await mkdtemp(path.join(tmpdir(), "quire-bench-copy-"));
  try {
    const start = await timedQuire(server.url, dir, ["--version"]);
    progress("workcopy: clone");
    const clone = await timedQuire(server.url, dir, ["clone", repo, "c"]);
    const copy = path.join(dir, "c");
    const firstStatus = await timedQuire(server.url, copy, ["status"]);
    const bare = await bareWalk(copy);
    const status = await timedQuire(server.url, copy, ["status"]);
    // The same comparison without the CLI's start: status's own work in this process.
    const index = await readIndex(copy);
    const scanStarted = performance.now();
    const scanned = await scan(copy, index);
    const scanSeconds = (performance.now() - scanStarted) / 1000;
    if (scanned.changes.length !== 0)
      throw new Error(`a clean copy showed ${scanned.changes.length} changes`);
    for (let i = 0; i < CHANGED; i++)
      await writeFile(path.join(copy, fixturePath(i * 10)), fillerText(FILE_BYTES));
    const dirtyStatus = await timedQuire(server.url, copy, ["status"]);
    progress("workcopy: commit");
    const commit = await timedQuire(server.url, copy, ["commit", "-m", `change ${CHANGED} files`]);
    const row = (scenario: string, seconds: number, extra: Partial<Row> = {}): Row => ({
      scenario,
      result: s(seconds),
      errors: 0,
      ...extra,
    });
    return [
      row("quire --version (CLI start, in every figure below)", start),
      row(`quire clone, ${FILES} files of 4 KiB`, clone),
      row("quire status right after clone (hashes every file once, then refreshes the index)", firstStatus),
      row(`bare walk + SHA-256 of the ${FILES} files (in process)`, bare),
      row("quire status, clean (size+mtime fast path)", status, {
        ratio: status / bare,
        ratioOf: "bare walk + hash",
      }),
      row(`status's scan alone, clean, in process (hashed ${scanned.hashed} files)`, scanSeconds, {
        ratio: scanSeconds / bare,
        ratioOf: "bare walk + hash",
      }),
      row(`quire status, ${CHANGED} files changed`, dirtyStatus, {
        ratio: dirtyStatus / bare,
        ratioOf: "bare walk + hash",
      }),
      row(`quire commit of ${CHANGED} changed files`, commit),
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
