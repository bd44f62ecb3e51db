import type { LoadResult } from "./load.ts";
import type { PhaseRecord } from "./phases.ts";
import type { Plan } from "./plan.ts";
import { type CommitLayout, LAYOUT_LABELS } from "./scenarios/commits.ts";
import { READ_CASES } from "./scenarios/reads.ts";

/** The targets. */
export const TARGETS = {
  /** Commits per second to main with 16 clients, as a share of the baseline's transactions per second. */
  commitShareOfBaseline: 0.25,
  treeP50Ms: 15,
  /** A tree page on the 20,000-commit repo against the same page on the 1,000-commit repo. */
  treeHistoryRatio: 1.5,
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

function memoryRows(res: BenchResults): Row[] {
  const m = res.memory;
  return [
    { scenario: "Server RSS after startup", result: `${m.idleRssMiB.toFixed(0)} MiB`, errors: 0 },
    {
      scenario: "Server peak RSS (VmHWM) over the run",
      result: `${m.peakRssMiB.toFixed(0)} MiB`,
      ratio: m.peakRssMiB / m.idleRssMiB,
      ratioOf: "RSS after startup",
      errors: 0,
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
