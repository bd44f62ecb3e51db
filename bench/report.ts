import type { EventsResults } from "./events.ts";
import type { LoadResult } from "./load.ts";
import type { PhaseRecord } from "./phases.ts";
import type { Plan } from "./plan.ts";
import type { ReviewResults } from "./review.ts";
import type { ArchiveTree } from "./scenarios/archive.ts";
import type { CiBenchResult } from "./scenarios/ci.ts";
import { type CommitLayout, LAYOUT_LABELS } from "./scenarios/commits.ts";
import type { LargeFilesResult } from "./scenarios/large-files.ts";
import { type PolicyLatency, WARM_TARGET_MS } from "./scenarios/policy.ts";
import { READ_CASES } from "./scenarios/reads.ts";
import { TARGET_P99_MS as SSE_TARGET_P99_MS } from "./scenarios/sse.ts";

/** The issue's targets. */
export const TARGETS = {
  /** Commits per second to main with 16 clients, as a share of the baseline's transactions per second. */
  commitShareOfBaseline: 0.4,
  treeP50Ms: 15,
  /** A tree page on the 20,000-commit repo against the same page on the 1,000-commit repo. */
  treeHistoryRatio: 1.5,
  /** Warm evaluation of the two policies of one merge, at p99 (bench/scenarios/policy.ts). */
  policyWarmMs: WARM_TARGET_MS,
  /** From a commit's response to an SSE client receiving its event, over two instances. */
  sseP99Ms: SSE_TARGET_P99_MS,
  /** The server process (as `npm start` runs it) just after it answers /healthz. */
  startRssMiB: 80,
  /** Its peak (VmHWM) through the write and read phases: every phase before large files. */
  peakRssMiB: 120,
};

export interface BenchResults {
  date: string;
  machine: Record<string, string | number>;
  plan: Plan;
  baseline: LoadResult;
  /** The baseline measured again at the end: if it moved, the machine's disk or load changed mid-run. */
  baselineEnd: LoadResult;
  httpFloor: LoadResult;
  commits: Record<CommitLayout, LoadResult>;
  /** The two read fixtures: the same tree of files, with a short and a long history. */
  repos: { small: RepoBuild; big: RepoBuild };
  reads: { id: string; label: string; big: LoadResult; small: LoadResult }[];
  review: ReviewResults;
  events: EventsResults;
  ci: CiBenchResult;
  largeFiles: LargeFilesResult;
  /** The peak is the highest VmHWM read over the run: each phase resets it (bench/phases.ts). */
  memory: { idleRssMiB: number; peakRssMiB: number };
  phases: PhaseRecord[];
}

export interface RepoBuild {
  repo: string;
  files: number;
  commits: number;
  /** The 1-file edits that built the history, sent like the commit scenarios (16 clients on main). */
  edits: LoadResult;
}

/** One line of the results table. Ratios are plain numbers; `met` is absent where no target applies. */
export interface Row {
  scenario: string;
  result: string;
  p50Ms?: number;
  p99Ms?: number;
  ratio?: number;
  ratioOf?: string;
  target?: string;
  met?: boolean;
  errors: number;
}

const rate = (r: LoadResult, unit: string) => `${r.perSecond.toFixed(0)} ${unit}/s (n=${r.requests})`;
const latency = (r: LoadResult) => ({ p50Ms: r.p50Ms, p99Ms: r.p99Ms, errors: r.errors });

export function rowsOf(res: BenchResults): Row[] {
  return [
    ...baselineRows(res),
    ...commitRows(res),
    ...readRows(res),
    ...machineRows(res),
    ...memoryRows(res),
  ];
}

function baselineRows(res: BenchResults): Row[] {
  const tps = res.baseline.perSecond;
  return [
    {
      scenario: "Baseline: pg BEGIN; INSERT; COMMIT, 1 client",
      result: rate(res.baseline, "tx"),
      ...latency(res.baseline),
    },
    {
      scenario: "Baseline again at the end of the run",
      result: rate(res.baselineEnd, "tx"),
      ...latency(res.baselineEnd),
      ratio: res.baselineEnd.perSecond / tps,
      ratioOf: "baseline",
    },
    {
      scenario: "HTTP floor: GET /healthz, 1 client",
      result: rate(res.httpFloor, "req"),
      ...latency(res.httpFloor),
    },
  ];
}

function commitRows(res: BenchResults): Row[] {
  const tps = res.baseline.perSecond;
  const rows: Row[] = (Object.keys(LAYOUT_LABELS) as CommitLayout[]).map((layout) => {
    const r = res.commits[layout];
    const share = r.perSecond / tps;
    const targeted = layout === "main";
    return {
      scenario: `Commit, 1 file: ${LAYOUT_LABELS[layout]}`,
      result: rate(r, "commits"),
      ...latency(r),
      ratio: share,
      ratioOf: "baseline TPS",
      ...(targeted
        ? { target: `>= ${TARGETS.commitShareOfBaseline}`, met: share >= TARGETS.commitShareOfBaseline }
        : {}),
    };
  });
  for (const b of [res.repos.small, res.repos.big])
    rows.push({
      scenario: `Commit, 1 file: 16 clients on main while building ${b.repo} (${b.commits} commits)`,
      result: rate(b.edits, "commits"),
      ...latency(b.edits),
      ratio: b.edits.perSecond / tps,
      ratioOf: "baseline TPS",
    });
  return rows;
}

function readRows(res: BenchResults): Row[] {
  const { big, small } = res.repos;
  return res.reads.flatMap((read) => {
    const tree = READ_CASES.find((c) => c.id === read.id)?.treePage ?? false;
    const ratio = read.big.p50Ms / read.small.p50Ms;
    const met = read.big.p50Ms < TARGETS.treeP50Ms && ratio <= TARGETS.treeHistoryRatio;
    return [
      {
        scenario: `${read.label}: ${big.commits}-commit repo`,
        result: rate(read.big, "req"),
        ...latency(read.big),
        ratio,
        ratioOf: "same read, small repo (p50)",
        ...(tree
          ? { target: `p50 < ${TARGETS.treeP50Ms} ms, ratio <= ${TARGETS.treeHistoryRatio}`, met }
          : {}),
      },
      {
        scenario: `${read.label}: ${small.commits}-commit repo`,
        result: rate(read.small, "req"),
        ...latency(read.small),
      },
    ];
  });
}

/** How busy the machine was with other work: on 2 cores that skews every figure above. */
function machineRows(res: BenchResults): Row[] {
  const others = res.phases.map((p) => p.othersCpuShare * 100);
  const seconds = res.phases.reduce((sum, p) => sum + p.seconds, 0);
  const mean = res.phases.reduce((sum, p) => sum + p.othersCpuShare * p.seconds, 0) / seconds;
  return [
    {
      scenario: "Machine: CPU taken by other processes during the phases (mean / worst phase)",
      result: `${(mean * 100).toFixed(0)}% / ${Math.max(...others).toFixed(0)}% of ${res.machine["cpus"]} CPUs`,
      errors: 0,
    },
  ];
}

/** The Node process's memory (its embedded PostgreSQL is a process of its own, not counted). */
function memoryRows(res: BenchResults): Row[] {
  const m = res.memory;
  const phases = res.phases;
  const largeFiles = phases.findIndex((p) => p.name === LARGE_FILES_PHASE);
  const writeRead = peakOver(phases, 0, largeFiles < 0 ? phases.length : largeFiles);
  const review = peakOver(
    phases,
    phases.findIndex((p) => p.name === "merge setup"),
    phases.findIndex((p) => p.name === "status, two policies") + 1,
  );
  const peakRow = (scenario: string, peak: PhasePeak): Row => ({
    scenario,
    result: `${peak.peakMiB.toFixed(0)} MiB${peak.phase ? ` (in ${peak.phase})` : ""}`,
    ratio: peak.peakMiB / m.idleRssMiB,
    ratioOf: "RSS after startup",
    target: `<= ${TARGETS.peakRssMiB} MiB`,
    met: peak.peakMiB <= TARGETS.peakRssMiB,
    errors: 0,
  });
  return [
    {
      scenario: "Server RSS after startup (the Node process; its PostgreSQL not counted)",
      result: `${m.idleRssMiB.toFixed(0)} MiB`,
      target: `<= ${TARGETS.startRssMiB} MiB`,
      met: m.idleRssMiB <= TARGETS.startRssMiB,
      errors: 0,
    },
    peakRow(
      "Server peak RSS (VmHWM) through the write and read phases (every phase before large files)",
      writeRead,
    ),
    peakRow("Server peak RSS (VmHWM) in the review and merge phases (merge setup to branch status)", review),
    {
      scenario: "Server peak RSS (VmHWM) over the run, large files included (their own rows are below)",
      result: `${m.peakRssMiB.toFixed(0)} MiB`,
      ratio: m.peakRssMiB / m.idleRssMiB,
      ratioOf: "RSS after startup",
      errors: 0,
    },
  ];
}

/** The phase named in the run for the large-files scenario (bench/run.ts). */
export const LARGE_FILES_PHASE = "large files";

interface PhasePeak {
  peakMiB: number;
  /** Where it was reached: a phase, or the gap before one. */
  phase: string | undefined;
}

/**
 * The peak RSS over the phases `from` to `to - 1`, the gaps between them included: each phase's
 * own peak, and the one read right before the next phase reset it (which covers the gap).
 */
function peakOver(phases: PhaseRecord[], from: number, to: number): PhasePeak {
  let best: PhasePeak = { peakMiB: 0, phase: undefined };
  const consider = (peakMiB: number, phase: string) => {
    if (peakMiB > best.peakMiB) best = { peakMiB, phase };
  };
  for (let i = Math.max(from, 0); i < to; i++) {
    const p = phases[i];
    if (p) consider(p.peakRssMiB, `phase '${p.name}'`);
    const next = phases[i + 1];
    if (next && i + 1 > from) consider(next.peakBeforeMiB, `the steps before phase '${next.name}'`);
  }
  return best;
}

/** The second table: merging, policies, branch status and the archive. */
export function reviewRowsOf(res: BenchResults): Row[] {
  return [...mergeRows(res), ...policyRows(res.review), ...statusRows(res.review), ...archiveRows(res)];
}

function mergeRows(res: BenchResults): Row[] {
  const m = res.review.merge;
  return [
    {
      scenario: `Merge (POST merge) of a branch of ${m.files} rewritten files (${m.fileBytes} bytes each) into main of ${res.repos.big.repo}, 1 client, ${m.branches} branches one after another`,
      result: rate(m.result, "merges"),
      ...latency(m.result),
      ratio: m.result.p50Ms / res.baseline.p50Ms,
      ratioOf: "baseline tx latency (p50)",
    },
  ];
}

function policyRows(review: ReviewResults): Row[] {
  const row = (label: string, l: PolicyLatency): Row => ({
    scenario: `Policy evaluation, require_review + ci_must_pass (one merge), bench process against the server's database: ${label}`,
    result: `n=${l.runs}, max ${ms(l.maxMs)} ms`,
    p50Ms: l.p50Ms,
    p99Ms: l.p99Ms,
    errors: 0,
  });
  const p = review.policy;
  return [
    {
      ...row("warm (compiled and loaded)", p.warm),
      target: `p99 < ${TARGETS.policyWarmMs} ms`,
      met: p.warmTargetMet,
    },
    row("new instance (modules read from policy_modules and instantiated)", p.newInstance),
    row("cold (new versions compiled by opa, stored, evaluated)", p.cold),
  ];
}

function statusRows(review: ReviewResults): Row[] {
  const s = review.status;
  const url = `GET branch/${s.branch}/status, ${s.changedFiles} changed files`;
  const added = s.withPolicies.p50Ms - s.withoutPolicies.p50Ms;
  return [
    {
      scenario: `${url}, no policies on main`,
      result: rate(s.withoutPolicies, "req"),
      ...latency(s.withoutPolicies),
    },
    {
      scenario: `${url}, require_review + ci_must_pass on main (warm in the server)`,
      result: `${rate(s.withPolicies, "req")}, ${added >= 0 ? "+" : ""}${ms(added)} ms p50 for the policies`,
      ...latency(s.withPolicies),
      ratio: s.withPolicies.p50Ms / s.withoutPolicies.p50Ms,
      ratioOf: "same status without policies (p50)",
    },
    {
      scenario: `${url}: first request after the policies were committed (the server compiles both)`,
      result: `${ms(s.firstWithPoliciesMs)} ms (1 request)`,
      errors: 0,
    },
  ];
}

function archiveRows(res: BenchResults): Row[] {
  const a: ArchiveTree = res.review.archive;
  const b = a.best;
  const worst = a.runs.reduce((x, y) => (y.peakRssKiB > x.peakRssKiB ? y : x));
  const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
  return [
    {
      scenario: `Archive (GET archive) of main of ${res.repos.big.repo} at its head: ${a.files} files, ${(b.contentBytes / 1e6).toFixed(1)} MB of content, ${(b.archiveBytes / 1e6).toFixed(1)} MB tar.gz (best of ${a.runs.length})`,
      result: `${b.archiveMBps.toFixed(1)} MB/s of tar.gz, ${b.contentMBps.toFixed(1)} MB/s of content, ${(a.files / b.seconds).toFixed(0)} files/s (${b.seconds.toFixed(2)} s)`,
      errors: 0,
    },
    {
      scenario: `Server RSS while streaming that archive (the download with the highest peak; peak from ${worst.peakSource === "hwm" ? "VmHWM reset right before it" : "a 10 ms VmRSS sampler"})`,
      result: `${mib(worst.rssBeforeKiB)} before, ${mib(worst.peakRssKiB)} peak (${mib(worst.growthKiB)} growth)`,
      ratio: worst.peakRssKiB / worst.rssBeforeKiB,
      ratioOf: "RSS before",
      errors: 0,
    },
  ];
}

/** The third table: SSE latency over two instances, and webhook delivery. */
export function eventRowsOf(res: BenchResults): Row[] {
  const { sse, webhooks: w } = res.events;
  const tps = res.baseline.perSecond;
  const oneClient = res.commits.single.perSecond;
  const dup = w.duplicates > 0 ? `, ${w.duplicates} received twice (not counted)` : "";
  return [
    {
      scenario: `SSE: from a commit's response to each stream receiving its event; ${sse.clients} streams over 2 Quire processes on one database (${sse.clients / 2} each), ${sse.commits} commits alternating between them, one at a time`,
      result: `n=${sse.deliveries} deliveries, max ${ms(sse.maxMs)} ms, ${sse.beforeResponse} before the response`,
      p50Ms: sse.p50Ms,
      p99Ms: sse.p99Ms,
      target: `p99 < ${TARGETS.sseP99Ms} ms`,
      met: sse.targetMet,
      errors: sse.errors,
    },
    {
      scenario: `Webhooks, backlog drain: ${w.subscriptions} subscriptions (signed) to one receiver on 127.0.0.1, ${w.backlog.commits} held events each, all resumed at once`,
      result: `${w.backlog.deliveriesPerSecond.toFixed(0)} deliveries/s (n=${w.backlog.deliveries}, ${w.backlog.seconds.toFixed(2)} s)${dup}`,
      ratio: w.backlog.deliveriesPerSecond / tps,
      ratioOf: "baseline TPS",
      errors: w.backlog.errors,
    },
    {
      scenario: `Webhooks, live: ${w.live.commits} commits from 1 client to the same repo, each delivered to the ${w.subscriptions} subscriptions; latency from a commit's response to each delivery`,
      result: `${w.live.deliveriesPerSecond.toFixed(0)} deliveries/s (n=${w.live.deliveries}), ${w.live.commitsPerSecond.toFixed(0)} commits/s, max ${ms(w.live.maxMs)} ms`,
      p50Ms: w.live.p50Ms,
      p99Ms: w.live.p99Ms,
      ratio: w.live.commitsPerSecond / oneClient,
      ratioOf: "commits/s of 'Commit, 1 file: 1 client' (no subscriptions)",
      errors: w.live.errors,
    },
  ];
}

/** The fourth table: the CI scheduler's claims and the path from a commit to a claimable job. */
export function ciRowsOf(res: BenchResults): Row[] {
  const { queue, claims: c, commitToClaim: l, webhook: w, burst: b } = res.ci;
  const tps = res.baseline.perSecond;
  const part = (what: string, p: { p50Ms: number; p99Ms: number }): Row => ({
    scenario: `CI: of which ${what}`,
    result: `n=${l.commits}`,
    ...p,
    errors: 0,
  });
  const checked = `${c.doubleClaims} double claims, ${c.retried} with attempt > 1, ${c.unclaimed} left unclaimed`;
  return [
    {
      scenario: `CI: queue manual runs (POST ci/run on main of ${res.ci.repo}), 16 clients`,
      result: rate(queue, "jobs"),
      ...latency(queue),
      ratio: queue.perSecond / tps,
      ratioOf: "baseline TPS",
    },
    {
      scenario: `CI: claims (POST /claim) of ${c.queued} queued jobs by ${c.claimers} concurrent claimers, each until 204`,
      result: `${rate(c, "claims")}; ${checked}`,
      ...latency(c),
      ratio: c.perSecond / tps,
      ratioOf: "baseline TPS",
    },
    {
      scenario: `CI: from a commit's response to POST /claim answering its push job; idle queue, 1 client committing to a branch, 1 worker polling every ${l.pollMs} ms`,
      result: `n=${l.commits}, max ${ms(l.maxMs)} ms, ${l.beforeResponse} before the response`,
      p50Ms: l.p50Ms,
      p99Ms: l.p99Ms,
      ratio: l.p50Ms / res.baseline.p50Ms,
      ratioOf: "baseline tx latency (p50)",
      errors: l.errors,
    },
    part(
      "commit response to job queued (queued_at, server clock, ms): event, delivery to /webhook, .svc/ci.yaml read",
      l.toQueued,
    ),
    part("job queued (before its insert commits) to the poller's claim answer", l.toClaim),
    {
      scenario: `CI: POST /webhook alone (a signed commit.created posted by the bench, 1 client): verify, read .svc/ci.yaml, queue`,
      result: `n=${w.posts}`,
      p50Ms: w.p50Ms,
      p99Ms: w.p99Ms,
      ratio: w.p50Ms / res.baseline.p50Ms,
      ratioOf: "baseline tx latency (p50)",
      errors: w.errors,
    },
    {
      scenario: `CI: intake burst: ${b.commits} commits from 16 clients, each on its own branch, each queuing a push job through the scheduler's one subscription`,
      result: `${b.jobsPerSecond.toFixed(0)} jobs/s queued (n=${b.jobs}, ${b.seconds.toFixed(2)} s), ${b.commitsPerSecond.toFixed(0)} commits/s, last job queued ${b.lagSeconds.toFixed(2)} s after the last commit`,
      ratio: b.jobsPerSecond / b.commitsPerSecond,
      ratioOf: "the burst's commits/s",
      errors: b.errors,
    },
  ];
}

const ms = (v: number | undefined) => (v === undefined ? "" : v < 10 ? v.toFixed(2) : v.toFixed(1));
const cell = (s: string) => s.replaceAll("|", "\\|");

/** The table printed to stdout, and pasted into docs/benchmarks.md. */
export function markdownTable(rows: Row[]): string {
  const head =
    "| Scenario | Result | p50 ms | p99 ms | Ratio | Target | Met |\n|---|---|---:|---:|---|---|---|";
  const lines = rows.map((r) => {
    const ratio = r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}x ${r.ratioOf}`;
    const met = r.met === undefined ? "" : r.met ? "yes" : "**no**";
    const errors = r.errors > 0 ? ` **${r.errors} errors**` : "";
    return `| ${cell(r.scenario)} | ${r.result}${errors} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${cell(ratio)} | ${cell(r.target ?? "")} | ${met} |`;
  });
  return [head, ...lines].join("\n");
}

/**
 * Where the CPU went, per request, in each phase that is one request loop: the server is one Node
 * event loop, so its CPU per request bounds the whole service's rate at 1000 / ms requests per second.
 */
export function cpuTable(phases: PhaseRecord[]): string {
  const head =
    "| Phase | Requests | Quire CPU ms/req | PostgreSQL CPU ms/req | Bench client CPU ms/req | CPU taken by others |\n|---|---:|---:|---:|---:|---:|";
  const perRequest = (seconds: number, n: number) => ((seconds * 1000) / n).toFixed(2);
  const lines = phases.flatMap((p) =>
    p.requests
      ? [
          `| ${p.name} | ${p.requests} | ${perRequest(p.cpuSeconds.server, p.requests)} | ${perRequest(p.cpuSeconds.postgres, p.requests)} | ${perRequest(p.cpuSeconds.client, p.requests)} | ${(p.othersCpuShare * 100).toFixed(0)}% |`,
        ]
      : [],
  );
  return [head, ...lines].join("\n");
}

export function machineLine(res: BenchResults): string {
  const m = res.machine;
  return `${res.date}, ${m["cpus"]} x ${m["cpuModel"]}, ${m["memoryGiB"]} GiB, ${m["os"]}, Node ${m["node"]}, PostgreSQL ${m["postgres"]} (embedded), load average ${m["loadAverageAtStart"]} at start, plan ${res.plan.name}`;
}
