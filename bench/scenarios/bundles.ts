import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { cloudFunctions } from "../../functions/groups.ts";
import { type BuiltFunction, buildFunctions } from "../../scripts/build.ts";
import { FUNCTION_ENV } from "../../scripts/bundle-options.ts";
import {
  firstAnswer,
  helloWorld,
  linkDependencies,
  listening,
  memoryKiB,
  probeOf,
  startBundle,
} from "../../scripts/bundle-process.ts";
import { MEASURED_BODY_MIB, REPOS_COMMIT_MIB, REPOS_STARTED_MIB } from "../../test/deploy/memory-budget.ts";
import { startTestIdp } from "../../test/support/idp.ts";
import { quireClient } from "../client.ts";
import { progress } from "../log.ts";
import { BENCH_IDENTITY, type QuireProcess } from "../server.ts";
import { COMMIT_PEAK_PER_BODY_TARGET } from "./large-files.ts";

/**
 * The deployed functions (`npm run build`): each folder's size, and its cold start, from process
 * start to the first answer of one call (which includes building the context: the migration check
 * and the pool), each started alone by the Functions Framework CLI on plain Node. The anchor is a
 * hello-world function started the same way in the same run, measured before, between and after.
 * Then the repos bundle's memory under 30 MiB commits.
 */

/** Cold start of a function at most this many times the hello world's (docs/benchmarks.md). */
const COLD_START_RATIO_TARGET = 3;
/** Deployable folder (without opa) at most this big: Cloud Build uploads and unpacks it. */
const SIZE_TARGET_MB = 5;
/** A function's RSS once it has answered its first request (issue 22). */
const FIRST_ANSWER_RSS_TARGET_MIB = 90;

interface BundleRow {
  target: string;
  codeMB: number;
  totalMB: number;
  coldStartMs: number;
  listeningMs: number;
  /** VmRSS right after the first answer, MiB. */
  rssMiB: number;
}

/** Process start to listening (the code loaded), and to the first answer (the context built). */
interface ColdStart {
  listeningMs: number;
  coldStartMs: number;
  rssMiB: number;
}

export async function measureBundles(server: QuireProcess): Promise<string> {
  const { databaseUrl } = server;
  const work = await mkdtemp(path.join(tmpdir(), "quire-bench-bundles-"));
  try {
    progress("bundles: npm run build");
    const built = await buildFunctions(path.join(work, "functions"));
    await linkDependencies(
      work,
      built.flatMap((b) => Object.keys(b.dependencies)),
    );
    const hello = await helloWorld(work);
    const env = {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "error",
      SVC_DATA_DIR: path.join(work, "data"),
      SVC_BLOB_LOCAL_DIR: path.join(work, "blobs"),
      SVC_CI_LOG_DIR: path.join(work, "ci-logs"),
      // Terraform's settings for the functions; BUNDLE_NODE_OPTIONS tries other Node options ("" for none).
      ...FUNCTION_ENV,
      NODE_OPTIONS: process.env["BUNDLE_NODE_OPTIONS"] ?? FUNCTION_ENV.NODE_OPTIONS,
    };
    const anchor = async () => (await coldStart(hello, "hello", "/", { method: "GET" }, {})).coldStartMs;
    const anchors = [await anchor()];
    const rows: BundleRow[] = [];
    for (const [i, b] of built.entries()) {
      if (i === Math.floor(built.length / 2)) anchors.push(await anchor());
      const probe = probeOf(cloudFunctions[b.target]);
      const start = await coldStart(b.dir, b.target, probe.pathname, probe.init, env);
      rows.push({ target: b.target, ...(await sizes(b)), ...start });
      progress(
        `bundles: ${b.target} ${start.listeningMs.toFixed(0)} / ${start.coldStartMs.toFixed(0)} ms, ${start.rssMiB.toFixed(0)} MiB`,
      );
    }
    anchors.push(await anchor());
    const repos = built.find((b) => b.target === "repos");
    if (!repos) throw new Error("no repos function was built");
    const memory = await reposMemory(server, repos.dir, { ...env, SVC_BLOB_LOCAL_DIR: server.blobDir });
    return `${table(rows, anchors)}\n\n${memory}`;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function coldStart(
  dir: string,
  target: string,
  pathname: string,
  init: RequestInit,
  env: Record<string, string>,
): Promise<ColdStart> {
  const started = performance.now();
  const proc = await startBundle(dir, target, env);
  try {
    await listening(proc);
    const listeningMs = performance.now() - started;
    const res = await firstAnswer(proc, pathname, init, 120_000);
    const coldStartMs = performance.now() - started;
    await res.arrayBuffer();
    if (res.status >= 500) throw new Error(`${target}: ${pathname} answered ${res.status}: ${proc.output()}`);
    const rssMiB = (await memoryKiB(proc.child.pid ?? 0)).rssKiB / 1024;
    return { listeningMs, coldStartMs, rssMiB };
  } finally {
    await proc.stop();
  }
}

/** Commits of a 30 MiB body sent at once to the repos bundle, as in test/deploy/repos-memory.test.ts. */
const LARGE_COMMITS = 3;

/**
 * The repos bundle's peak RSS (VmHWM): once started and warmed by a small commit, then after
 * LARGE_COMMITS commits of a 30 MiB body at once and the reads of their files (docs/deploy.md,
 * "Memory of the repos function"; the bounds are test/deploy/memory-budget.ts').
 */
async function reposMemory(server: QuireProcess, dir: string, env: Record<string, string>): Promise<string> {
  const q = quireClient(server.url);
  const org = `bundles-${randomBytes(3).toString("hex")}`;
  const repo = `${org}/memory`;
  await q.post("/orgs", { body: { name: org } });
  await q.post("/repos", { body: { owner: org, name: repo } });
  // A cloud function refuses DEV_IDENTITY: the bundle checks ID tokens of a local provider, as
  // test/deploy/repos-memory.test.ts does.
  const idp = await startTestIdp();
  const proc = await startBundle(dir, "repos", { ...env, OIDC_ISSUER: idp.issuer });
  try {
    const authorization = `Bearer ${await idp.token(BENCH_IDENTITY)}`;
    const commit = async (file: string, data: Buffer) => {
      const res = await firstAnswer(proc, `/repos/${repo}/-/commit`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: JSON.stringify({
          branch: "main",
          message: file,
          files: [{ path: file, content: data.toString("base64") }],
        }),
      });
      if (res.status !== 201) throw new Error(`commit of ${file}: ${res.status} ${await res.text()}`);
      const back = await fetch(`${proc.url}/repos/${repo}/-/file/${file}`, { headers: { authorization } });
      await back.arrayBuffer();
    };
    await commit("warm.md", Buffer.from("# warm\n"));
    const pid = proc.child.pid ?? 0;
    const bytes = (MEASURED_BODY_MIB * 1024 * 1024 * 3) / 4;
    // One commit of a 30 MiB body alone, and the read of its file: what it adds to the peak.
    const alone = await memoryKiB(pid);
    await commit("alone.bin", randomBytes(bytes));
    const aloneRise = ((await memoryKiB(pid)).peakKiB - alone.peakKiB) / 1024;
    const ratio = aloneRise / MEASURED_BODY_MIB;
    progress(`bundles: repos memory +${aloneRise.toFixed(0)} MiB for one ${MEASURED_BODY_MIB} MiB commit`);
    const before = await memoryKiB(pid);
    await Promise.all(
      Array.from({ length: LARGE_COMMITS }, (_, i) => commit(`large-${i}.bin`, randomBytes(bytes))),
    );
    const after = await memoryKiB(pid);
    const perRequest = (after.peakKiB - before.peakKiB) / 1024 / LARGE_COMMITS;
    progress(`bundles: repos memory +${perRequest.toFixed(0)} MiB a request`);
    return (
      `repos bundle memory (VmHWM): one commit of a ${MEASURED_BODY_MIB} MiB body (and the read of its file) ` +
      `raises the peak by ${aloneRise.toFixed(0)} MiB, ${ratio.toFixed(2)}x the body ` +
      `(target <= ${COMMIT_PEAK_PER_BODY_TARGET}x: ${ratio <= COMMIT_PEAK_PER_BODY_TARGET ? "met" : "**not met**"}). ` +
      `Started and warmed ${(alone.peakKiB / 1024).toFixed(0)} MiB ` +
      `(bound ${REPOS_STARTED_MIB}); ${LARGE_COMMITS} commits of a ${MEASURED_BODY_MIB} MiB body at once and ` +
      `the reads of their files add ${perRequest.toFixed(0)} MiB a request (bound ${REPOS_COMMIT_MIB})`
    );
  } finally {
    await proc.stop();
    await idp.close();
  }
}

async function sizes(b: BuiltFunction): Promise<{ codeMB: number; totalMB: number }> {
  const total = await folderBytes(b.dir);
  const opa = b.withOpa ? (await stat(path.join(b.dir, ".tools/bin/opa"))).size : 0;
  return { codeMB: (total - opa) / 1e6, totalMB: total / 1e6 };
}

async function folderBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return bytes;
}

function table(rows: BundleRow[], anchors: number[]): string {
  const anchor = [...anchors].sort((a, b) => a - b)[Math.floor(anchors.length / 2)] ?? Number.NaN;
  const head = `hello-world anchor (Functions Framework CLI, same run): ${anchors.map((a) => a.toFixed(0)).join(" / ")} ms (before / between / after), median ${anchor.toFixed(0)} ms\n\n| Function | Code MB | Folder MB | Listening ms | Cold start ms | Ratio to anchor | RSS after first answer | Target | Met |\n|---|---:|---:|---:|---:|---:|---:|---|---|`;
  const lines = rows.map((r) => {
    const ratio = r.coldStartMs / anchor;
    const met =
      ratio <= COLD_START_RATIO_TARGET &&
      r.codeMB <= SIZE_TARGET_MB &&
      r.rssMiB <= FIRST_ANSWER_RSS_TARGET_MIB;
    return `| ${r.target} | ${r.codeMB.toFixed(2)} | ${r.totalMB.toFixed(1)} | ${r.listeningMs.toFixed(0)} | ${r.coldStartMs.toFixed(0)} | ${ratio.toFixed(2)}x | ${r.rssMiB.toFixed(0)} MiB | ≤ ${COLD_START_RATIO_TARGET}x, code ≤ ${SIZE_TARGET_MB} MB, RSS ≤ ${FIRST_ANSWER_RSS_TARGET_MIB} MiB | ${met ? "yes" : "**no**"} |`;
  });
  return [head, ...lines].join("\n");
}
