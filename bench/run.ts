import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { parseArgs } from "node:util";
import { type QuireClient, quireClient } from "./client.ts";
import { analyze, serverVersion } from "./database.ts";
import { measureEvents } from "./events.ts";
import {
  addBranch,
  createOrg,
  createRepo,
  editRepo,
  headOf,
  type RepoFixture,
  writeTree,
} from "./fixtures.ts";
import { progress } from "./log.ts";
import { phaseRunner, sentBy } from "./phases.ts";
import { FULL, type Plan, QUICK } from "./plan.ts";
import {
  type BenchResults,
  ciRowsOf,
  cpuTable,
  eventRowsOf,
  LARGE_FILES_PHASE,
  machineLine,
  markdownTable,
  type RepoBuild,
  reviewRowsOf,
  rowsOf,
} from "./report.ts";
import { measureReview, opaMissing } from "./review.ts";
import { measureBaseline } from "./scenarios/baseline.ts";
import { measureBundles } from "./scenarios/bundles.ts";
import { createCiRepo, measureCi } from "./scenarios/ci.ts";
import { measureCiRun } from "./scenarios/ci-run.ts";
import { measureCloudWebhooks } from "./scenarios/cloud-webhooks.ts";
import { measureCommitLock } from "./scenarios/commit-lock.ts";
import { type CommitLayout, measureCommits } from "./scenarios/commits.ts";
import { measureGitImport } from "./scenarios/git-import.ts";
import { largeFileRows, measureLargeFiles } from "./scenarios/large-files.ts";
import { measureReadPath } from "./scenarios/read-path.ts";
import { measureHttpFloor, measureRead, READ_CASES } from "./scenarios/reads.ts";
import { measureStartMemory } from "./scenarios/start-memory.ts";
import { measureStructuredMerge } from "./scenarios/structured-merge.ts";
import { measureTransparency } from "./scenarios/transparency.ts";
import { measureWeb } from "./scenarios/web.ts";
import { measureWorkcopy } from "./scenarios/workcopy.ts";
import { type QuireProcess, startQuire, stopEveryQuire } from "./server.ts";

/** Scenarios that `--only` can run by themselves. */
const ALONE: Record<string, (server: QuireProcess, quick: boolean) => Promise<string>> = {
  "large-files": async (server) => markdownTable(largeFileRows(await measureLargeFiles(server))),
  // The deployed functions (`npm run build`): size and cold start against a hello world, and
  // the repos function's memory under 30 MiB commits.
  bundles: measureBundles,
  // The deployed functions with terraform's environment: commit to first webhook delivery.
  "cloud-webhooks": (server) => measureCloudWebhooks(server.databaseUrl),
  // Every web page (the page tour's list) against the API reads it is built from (docs/web.md).
  web: measureWeb,
  // The CI worker, real runner and registry: commit to check passed, and archive unpacking.
  "ci-run": measureCiRun,
  // The working copy: quire clone/status of 10,000 files, quire commit of 1,000.
  workcopy: async (server) => markdownTable(await measureWorkcopy(server)),
  // quire import-git and export-git of 10,000 git commits (500 with --quick) against git's own copy.
  "git-import": async (server, quick) => markdownTable(await measureGitImport(server, quick)),
  // 1 MB JSON and YAML changed on both sides, and 500-file merges against the whole-file rule.
  "structured-merge": async (server) => markdownTable(await measureStructuredMerge(server)),
  // Commits from 1 and 16 clients on one repo's main against the INSERT baseline (issue 22).
  commits: measureCommitLock,
  // Tree pages, file reads and history against the HTTP floor, 1 and 16 clients (issue 22).
  reads: measureReadPath,
  // RSS after start of servers of its own as `npm start` runs them, and after a first page (issue 22).
  start: measureStartMemory,
  // Checkpoints and proofs on a 1,000,000-commit repo, and the commit rate with the log (docs/verifiable-history.md).
  transparency: measureTransparency,
};

/** ALONE scenarios whose server runs the CI scheduler (RUNNER_URL and a worker token). */
const NEEDS_CI = new Set(["ci-run"]);

/** The machine's one-minute load average (os.loadavg() always has three). */
function oneMinuteLoad(): number {
  const [oneMinute = 0] = os.loadavg();
  return oneMinute;
}

/**
 * `npm run bench [-- --json <file>] [-- --quick]`: starts Quire with its own embedded PostgreSQL,
 * measures a pg baseline and every scenario against that one server (the SSE scenario adds a
 * second Quire process on its database for its own phase), prints markdown tables to stdout and
 * stops the servers. Exits 1 if any measured request failed.
 *
 * `npm run bench -- --only <scenario>` runs one scenario of ALONE on a server of its own and
 * prints its table; a failed request fails the run.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      json: { type: "string" },
      quick: { type: "boolean", default: false },
      only: { type: "string" },
    },
  });
  if (values.only !== undefined) return runAlone(values.only, values.quick);
  const plan = values.quick ? QUICK : FULL;
  const noOpa = opaMissing();
  if (noOpa) {
    progress(`cannot run: ${noOpa}`);
    return 1;
  }
  const loadAtStart = oneMinuteLoad(); // before anything of ours runs: the machine's own business
  progress(`plan ${plan.name}: starting quire with a fresh embedded PostgreSQL`);
  stopOnSignal();
  try {
    const server = await startQuire({ ci: true, loopProbe: true });
    const results = await measureAll(server, plan, loadAtStart);
    const rows = rowsOf(results);
    const reviewRows = reviewRowsOf(results);
    const eventRows = eventRowsOf(results);
    const ciRows = ciRowsOf(results);
    const largeRows = largeFileRows(results.largeFiles);
    process.stdout.write(
      `\n${machineLine(results)}\n\n${markdownTable(rows)}\n\n### Review and merge\n\n${markdownTable(reviewRows)}\n\n### Events\n\n${markdownTable(eventRows)}\n\n### CI\n\n${markdownTable(ciRows)}\n\n### Large files\n\n${markdownTable(largeRows)}\n\n${cpuTable(results.phases)}\n`,
    );
    if (values.json)
      await writeFile(
        values.json,
        `${JSON.stringify({ ...results, rows, reviewRows, eventRows, ciRows, largeRows }, null, 2)}\n`,
      );
    const failed = [...rows, ...reviewRows, ...eventRows, ...ciRows].filter((r) => r.errors > 0);
    for (const r of failed) progress(`FAILED requests in "${r.scenario}"`);
    return failed.length > 0 ? 1 : 0;
  } finally {
    await stopEveryQuire(); // the second instance (if a failure left it running), then the server
  }
}

async function measureAll(server: QuireProcess, plan: Plan, loadAtStart: number): Promise<BenchResults> {
  const q = quireClient(server.url);
  const idle = await server.memory();
  const phases = phaseRunner(server);
  const baseline = await phases.run(
    "baseline",
    () => measureBaseline(server.databaseUrl, plan.baseline),
    sentBy,
  );
  progress(`baseline: ${baseline.perSecond.toFixed(0)} transactions/s`);
  const httpFloor = await phases.run("http floor", () => measureHttpFloor(q, plan.httpFloor), sentBy);
  await createOrg(q);
  const ciRepo = await createCiRepo(server, q); // before any commit: see createCiRepo
  const commitsOn = (layout: CommitLayout) =>
    phases.run(`commits ${layout}`, () => measureCommits(q, layout, plan.commits), sentBy);
  const commits = {
    single: await commitsOn("single"),
    main: await commitsOn("main"),
    branches: await commitsOn("branches"),
    repos: await commitsOn("repos"),
  };
  const small = await buildFixture(q, phases.run, "small", plan.smallCommits, plan);
  const big = await buildFixture(q, phases.run, "big", plan.bigCommits, plan);
  await analyze(server.databaseUrl);
  const reads = [];
  for (const c of READ_CASES) {
    const onBig = await phases.run(`${c.id} big`, () => measureRead(q, c, big.fixture, plan.reads), sentBy);
    const onSmall = await phases.run(
      `${c.id} small`,
      () => measureRead(q, c, small.fixture, plan.reads),
      sentBy,
    );
    reads.push({ id: c.id, label: c.label, big: onBig, small: onSmall });
  }
  const review = await measureReview(server, q, phases.run, plan, {
    big: big.summary.repo,
    small: small.summary.repo,
  });
  const events = await measureEvents(server, q, phases, plan);
  const ci = await measureCi(server, q, ciRepo, plan.ci, phases.run);
  const largeFiles = await phases.run(LARGE_FILES_PHASE, () => measureLargeFiles(server));
  const baselineEnd = await phases.run(
    "baseline again",
    () => measureBaseline(server.databaseUrl, plan.baseline),
    sentBy,
  );
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
    review,
    events,
    ci,
    largeFiles,
    memory: { idleRssMiB: idle.rssKiB / 1024, peakRssMiB: runPeakMiB(end.peakKiB, phases.records) },
    phases: phases.records,
  };
}

/** `--only <scenario>`: that scenario alone, on a server of its own. */
async function runAlone(name: string, quick: boolean): Promise<number> {
  const scenario = ALONE[name];
  if (!scenario) {
    progress(`--only: no scenario '${name}'; choose one of: ${Object.keys(ALONE).join(", ")}`);
    return 1;
  }
  stopOnSignal();
  try {
    const loadAtStart = oneMinuteLoad();
    const server = await startQuire({ loopProbe: true, ci: NEEDS_CI.has(name) });
    const table = await scenario(server, quick);
    // Pauses and MB/s scale with the CPU left over: say how busy the machine was.
    const load = `load average ${loadAtStart.toFixed(1)} at start, ${oneMinuteLoad().toFixed(1)} at end, ${os.cpus().length} CPUs`;
    // The server's own high-water mark: what the scenario cost it in memory (docs/benchmarks.md).
    const peak = `server peak RSS (VmHWM) ${((await server.memory()).peakKiB / 1024).toFixed(0)} MiB`;
    process.stdout.write(`\n### ${name}\n\n${load}; ${peak}\n\n${table}\n`);
    return process.exitCode === 1 ? 1 : 0; // a scenario that marks failed rows in its table sets it
  } finally {
    await stopEveryQuire();
  }
}

/**
 * The archive phase resets VmHWM to measure its own peak, so the run's peak is the highest VmHWM
 * read after any phase (each phase records it as it ends), or at the end.
 */
function runPeakMiB(endPeakKiB: number, records: { peakRssMiB: number; peakBeforeMiB: number }[]): number {
  return Math.max(endPeakKiB / 1024, ...records.flatMap((r) => [r.peakRssMiB, r.peakBeforeMiB]));
}

/** A read fixture: the tree in bulk commits, the edits (a phase of their own), then the branch. */
async function buildFixture(
  q: QuireClient,
  run: ReturnType<typeof phaseRunner>["run"],
  name: string,
  commits: number,
  plan: Plan,
): Promise<{ fixture: RepoFixture; summary: RepoBuild }> {
  progress(`building repo ${name}: ${plan.treeFiles} files, ${commits} commits`);
  const repo = await createRepo(q, name);
  const bulk = await run(`tree ${name}`, () => writeTree(q, repo, plan.treeFiles));
  const edits = await run(
    `edits ${name}`,
    () =>
      editRepo(q, repo, {
        files: plan.treeFiles,
        edits: commits - bulk,
        concurrency: plan.buildConcurrency,
        maxSeconds: plan.buildMaxSeconds,
      }),
    sentBy,
  );
  const branch = await addBranch(q, repo);
  const made = await headOf(q, repo);
  return {
    fixture: { name: repo, files: plan.treeFiles, commits: made, treeComplete: bulk, branch },
    summary: { repo, files: plan.treeFiles, commits: made, edits },
  };
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

/**
 * Ctrl-C, a kill or a crash outside main's try/finally (an 'error' event nobody listens to) must
 * not leave the servers (the harness's, and the SSE phase's second instance) and their PostgreSQL
 * running, nor their temp dirs: the children outlive us. Installed before the first server starts,
 * and every server is registered as soon as it is spawned.
 */
function stopOnSignal(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      progress(`${signal}: stopping`);
      void stopEveryQuire().finally(() => process.exit(130));
    });
  process.once("uncaughtException", (err) => {
    progress(`bench crashed: ${err.stack ?? err.message}`);
    void stopEveryQuire().finally(() => process.exit(1));
  });
}

try {
  process.exitCode = await main();
} catch (err) {
  progress(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
