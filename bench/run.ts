import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { parseArgs } from "node:util";
import { type QuireClient, quireClient } from "./client.ts";
import { othersShare, sampleCpu } from "./cpu.ts";
import { checkpoint, serverVersion } from "./database.ts";
import { buildRepo, createOrg } from "./fixtures.ts";
import { progress } from "./log.ts";
import { FULL, type Plan, QUICK } from "./plan.ts";
import {
  type BenchResults,
  machineLine,
  markdownTable,
  type PhaseRecord,
  type RepoBuild,
  rowsOf,
} from "./report.ts";
import { measureBaseline } from "./scenarios/baseline.ts";
import { measureCommits } from "./scenarios/commits.ts";
import { measureHttpFloor, measureRead, READ_CASES } from "./scenarios/reads.ts";
import { type QuireProcess, startQuire } from "./server.ts";

/**
 * `npm run bench [-- --json <file>] [-- --quick]`: starts Quire with its own embedded PostgreSQL,
 * measures a pg baseline and every scenario against that one server, prints a markdown table to
 * stdout and stops the server. Exits 1 if any measured request failed.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { json: { type: "string" }, quick: { type: "boolean", default: false } },
  });
  const plan = values.quick ? QUICK : FULL;
  const loadAtStart = os.loadavg()[0]!; // before anything of ours runs: the machine's own business
  progress(`plan ${plan.name}: starting quire with a fresh embedded PostgreSQL`);
  const server = await startQuire();
  stopOnSignal(server);
  try {
    const results = await measureAll(server, plan, loadAtStart);
    const rows = rowsOf(results);
    process.stdout.write(`\n${machineLine(results)}\n\n${markdownTable(rows)}\n`);
    if (values.json) await writeFile(values.json, `${JSON.stringify({ ...results, rows }, null, 2)}\n`);
    const failed = rows.filter((r) => r.errors > 0);
    for (const r of failed) progress(`FAILED requests in "${r.scenario}"`);
    return failed.length > 0 ? 1 : 0;
  } finally {
    await server.stop();
  }
}

async function measureAll(server: QuireProcess, plan: Plan, loadAtStart: number): Promise<BenchResults> {
  const q = quireClient(server.url);
  const idle = await server.memory();
  const phases: PhaseRecord[] = [];
  /** Runs one phase after a CHECKPOINT and records its duration, the CPU others took meanwhile, and the peak RSS so far. */
  const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    await checkpoint(server.databaseUrl);
    const [start, cpuBefore] = [performance.now(), await sampleCpu()];
    const result = await work();
    const seconds = (performance.now() - start) / 1000;
    const othersCpuShare = othersShare(cpuBefore, await sampleCpu(), seconds, os.cpus().length);
    if (othersCpuShare > 0.1)
      progress(
        `warning: other processes used ${pct(othersCpuShare)} of the CPUs during ${name}: figures are skewed`,
      );
    phases.push({ name, seconds, othersCpuShare, peakRssMiB: mib((await server.memory()).peakKiB) });
    return result;
  };
  const baseline = await phase("baseline", () => measureBaseline(server.databaseUrl, plan.baseline));
  progress(`baseline: ${baseline.perSecond.toFixed(0)} transactions/s`);
  const httpFloor = await phase("http floor", () => measureHttpFloor(q, plan.httpFloor));
  await createOrg(q);
  const commits = {
    single: await phase("commits single", () => measureCommits(q, "single", plan.commits)),
    main: await phase("commits main", () => measureCommits(q, "main", plan.commits)),
    branches: await phase("commits branches", () => measureCommits(q, "branches", plan.commits)),
    repos: await phase("commits repos", () => measureCommits(q, "repos", plan.commits)),
  };
  const small = await phase("build small", () => build(q, "small", plan.smallCommits, plan));
  const big = await phase("build big", () => build(q, "big", plan.bigCommits, plan));
  const reads = [];
  for (const c of READ_CASES) {
    const onBig = await phase(`read ${c.id} big`, () => measureRead(q, c, big.fixture, plan.reads));
    const onSmall = await phase(`read ${c.id} small`, () => measureRead(q, c, small.fixture, plan.reads));
    reads.push({ id: c.id, label: c.label, big: onBig, small: onSmall });
  }
  const baselineEnd = await phase("baseline again", () => measureBaseline(server.databaseUrl, plan.baseline));
  const end = await server.memory();
  return {
    date: new Date().toISOString(),
    machine: await machine(server.databaseUrl, loadAtStart),
    plan,
    baseline,
    baselineEnd,
    httpFloor,
    commits,
    repos: { small: small.summary, big: big.summary },
    reads,
    memory: { idleRssMiB: mib(idle.rssKiB), peakRssMiB: mib(end.peakKiB) },
    phases,
  };
}

async function build(q: QuireClient, name: string, commits: number, plan: Plan) {
  progress(`building repo ${name}: ${plan.treeFiles} files, ${commits} commits`);
  const { fixture, edits } = await buildRepo(q, {
    name,
    files: plan.treeFiles,
    commits,
    concurrency: plan.buildConcurrency,
    maxSeconds: plan.buildMaxSeconds,
  });
  const summary: RepoBuild = { repo: fixture.name, files: fixture.files, commits: fixture.commits, edits };
  return { fixture, summary };
}

async function machine(databaseUrl: string, loadAtStart: number): Promise<Record<string, string | number>> {
  const release = readFileSync("/etc/os-release", "utf8").match(/^PRETTY_NAME="?([^"\n]*)"?/m)?.[1];
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: release ?? `${os.type()} ${os.release()}`,
    node: process.versions.node,
    postgres: await serverVersion(databaseUrl),
    loadAverageAtStart: loadAtStart,
  };
}

const mib = (kib: number) => kib / 1024;
const pct = (share: number) => `${(share * 100).toFixed(0)}%`;

/** Ctrl-C or a kill must not leave the server and its PostgreSQL running, nor their temp dir. */
function stopOnSignal(server: QuireProcess): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      progress(`${signal}: stopping`);
      void server.stop().finally(() => process.exit(130));
    });
}

try {
  process.exitCode = await main();
} catch (err) {
  progress(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
