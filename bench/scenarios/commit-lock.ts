import { quireClient } from "../client.ts";
import { createOrg } from "../fixtures.ts";
import type { LoadResult } from "../load.ts";
import { phaseRunner, sentBy } from "../phases.ts";
import { FULL, QUICK } from "../plan.ts";
import { cpuTable, markdownTable, type Row, TARGETS } from "../report.ts";
import type { QuireProcess } from "../server.ts";
import { measureBaseline } from "./baseline.ts";
import { LAYOUT_LABELS, measureCommits } from "./commits.ts";

const MAIN_SHARE_OF_BASELINE = TARGETS.commitShareOfBaseline;

const rate = (r: LoadResult, unit: string) => `${r.perSecond.toFixed(0)} ${unit}/s (n=${r.requests})`;

/**
 * `npm run bench -- --only commits`: the main run's commit rows without the rest of it (what the
 * branch lock holds, docs/benchmarks.md). The single-client INSERT baseline is measured before and
 * after the commits and its mean divides them, so a machine whose load moves during the run moves
 * both sides of the ratio.
 */
export async function measureCommitLock(server: QuireProcess, quick: boolean): Promise<string> {
  const plan = quick ? QUICK : FULL;
  const q = quireClient(server.url);
  const phases = phaseRunner(server);
  const baselineOf = (name: string) =>
    phases.run(name, () => measureBaseline(server.databaseUrl, plan.baseline), sentBy);
  const before = await baselineOf("baseline");
  await createOrg(q);
  const single = await phases.run("commits single", () => measureCommits(q, "single", plan.commits), sentBy);
  const main = await phases.run("commits main", () => measureCommits(q, "main", plan.commits), sentBy);
  const after = await baselineOf("baseline again");
  const baseline = (before.perSecond + after.perSecond) / 2;
  const share = (r: LoadResult) => r.perSecond / baseline;
  const rows: Row[] = [
    { scenario: "Baseline INSERT transactions, 1 client (before)", result: rate(before, "tx"), errors: 0 },
    { scenario: "Baseline INSERT transactions, 1 client (after)", result: rate(after, "tx"), errors: 0 },
    {
      scenario: `Commit, ${LAYOUT_LABELS.single}`,
      result: rate(single, "commits"),
      p50Ms: single.p50Ms,
      p99Ms: single.p99Ms,
      ratio: share(single),
      ratioOf: "of the baseline (mean of both)",
      errors: single.errors,
    },
    {
      scenario: `Commit, ${LAYOUT_LABELS.main}`,
      result: rate(main, "commits"),
      p50Ms: main.p50Ms,
      p99Ms: main.p99Ms,
      ratio: share(main),
      ratioOf: "of the baseline (mean of both)",
      target: `at least ${MAIN_SHARE_OF_BASELINE}x`,
      met: share(main) >= MAIN_SHARE_OF_BASELINE,
      errors: main.errors,
    },
  ];
  return `${markdownTable(rows)}\n\n${cpuTable(phases.records)}`;
}
