import http from "node:http";
import { performance } from "node:perf_hooks";
import { buildTourSite, TOUR_PAGES, type TourPage, type TourSite } from "../../test/web/tour-pages.ts";
import { quireClient } from "../client.ts";
import { writeTree } from "../fixtures.ts";
import { type Budget, type LoadResult, percentile } from "../load.ts";
import { progress } from "../log.ts";
import { markdownTable, type Row } from "../report.ts";
import type { QuireProcess } from "../server.ts";
import { measureHttpFloor } from "./reads.ts";
import { measureSearch } from "./search.ts";

/**
 * Every page of the web interface (the page tour's list, test/web/tour-pages.ts) against the API
 * reads it is built from, in the same run (docs/web.md, "Speed"). A page is one server-rendered
 * HTML document, so its first paint is the time to the last byte of that document (the stylesheet
 * and script are cached for good after the first page). Each page and its API reads are fetched
 * alternately, one pair after another, so a change in the machine's load moves both alike and the
 * ratio does not depend on the machine. Target: each page within 2x its API reads at p50.
 */
const FILES = 2_000;
const BUDGET: Budget = { maxRequests: 200, maxSeconds: 6 };
const WARMUP = 10;
const TARGET_RATIO = 2;

/**
 * GET of a path on a keep-alive socket, the whole body read, asking for `accept`. Raw on purpose,
 * not the typed client, and the same for pages and API reads: a page's HTML and the API's JSON
 * are measured as bytes on the wire, without parsing either.
 */
function rawGetter(baseUrl: string) {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return (path: string, accept: string, status: number) =>
    new Promise<string>((resolve, reject) => {
      const req = http.get(
        { agent, host: base.hostname, port: base.port, path, headers: { accept } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            if (res.statusCode !== status)
              reject(new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 200)}`));
            else resolve(text);
          });
        },
      );
      req.on("error", reject);
    });
}

/** Latencies of a page and of its API reads, measured in alternation. */
interface PagePair {
  page: LoadResult;
  api: LoadResult;
}

function resultOf(
  times: number[],
  errors: number,
  firstError: string | undefined,
  seconds: number,
): LoadResult {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    requests: times.length,
    warmup: WARMUP,
    errors,
    ...(firstError ? { firstError } : {}),
    seconds,
    perSecond: times.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    meanMs: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length),
    maxMs: sorted.at(-1) ?? 0,
  };
}

/** One page against its API reads: pairs (the API reads one after the other, then the page) until the budget ends. */
async function measurePage(
  get: ReturnType<typeof rawGetter>,
  p: TourPage,
  site: TourSite,
): Promise<PagePair> {
  const path = p.path(site);
  const reads = p.api?.(site) ?? [];
  const status = p.status ?? 200;
  const timed = async (send: () => Promise<unknown>) => {
    const start = performance.now();
    await send();
    return performance.now() - start;
  };
  // A refusal page (404) is compared with the API's refusal of the same read.
  // Each answer is checked for its kind, so a broken read cannot pass for a fast one.
  const apiOnce = () =>
    timed(async () => {
      for (const read of reads)
        if (!/^[[{]/.test(await get(read, "application/json", status))) throw new Error(`${read}: not JSON`);
    });
  const pageOnce = () =>
    timed(async () => {
      if (!(await get(path, "text/html", status)).includes("</html>"))
        throw new Error(`${path}: not a whole page`);
    });
  for (let i = 0; i < WARMUP; i++) {
    await apiOnce();
    await pageOnce();
  }
  const pageTimes: number[] = [];
  const apiTimes: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  while (pageTimes.length + errors < BUDGET.maxRequests && elapsed() < BUDGET.maxSeconds) {
    try {
      apiTimes.push(await apiOnce());
      pageTimes.push(await pageOnce());
    } catch (err) {
      errors++;
      firstError ??= err instanceof Error ? err.message : String(err);
    }
  }
  const seconds = elapsed();
  return {
    page: resultOf(pageTimes, errors, firstError, seconds),
    api: resultOf(apiTimes, errors, firstError, seconds),
  };
}

/** The table's row of a page: its p50 and p99, its API reads' p50, the ratio judged against the target. */
function pageRow(p: TourPage, site: TourSite, pair: PagePair): Row {
  const ratio = pair.page.p50Ms / pair.api.p50Ms;
  const reads = p.api?.(site).length ?? 0;
  return {
    scenario: `${p.name} page`,
    result: `n=${pair.page.requests}; its ${reads} API read${reads === 1 ? "" : "s"}: p50 ${pair.api.p50Ms.toFixed(2)} ms`,
    p50Ms: pair.page.p50Ms,
    p99Ms: pair.page.p99Ms,
    ratio,
    ratioOf: "its API reads p50",
    target: `≤ ${TARGET_RATIO}x`,
    met: ratio <= TARGET_RATIO,
    errors: pair.page.errors,
  };
}

export async function measureWeb(server: QuireProcess): Promise<string> {
  const q = quireClient(server.url);
  const get = rawGetter(server.url);
  progress(`web: building the tour's site, with ${FILES} files on main`);
  const site = await buildTourSite(q, {
    org: "bench",
    bulk: async (repo) => {
      await writeTree(q, repo, FILES);
    },
  });
  const floor = await measureHttpFloor(q, BUDGET);
  const rows: Row[] = [
    {
      scenario: "GET /healthz (HTTP floor)",
      result: `n=${floor.requests}`,
      p50Ms: floor.p50Ms,
      p99Ms: floor.p99Ms,
      errors: floor.errors,
    },
  ];
  for (const p of TOUR_PAGES) {
    if (!p.api) {
      progress(`web: ${p.name} has no API reads to compare with; skipped`);
      continue;
    }
    progress(`web: ${p.name}`);
    rows.push(pageRow(p, site, await measurePage(get, p, site)));
  }
  rows.push(...(await measureSearch(q, (path) => get(path, "text/html", 200), floor.p50Ms)));
  const failed = rows.filter((r) => r.met === false).map((r) => r.scenario);
  const verdict =
    failed.length === 0 ? "Every page is within 2x its API reads." : `Above 2x: ${failed.join(", ")}.`;
  return `${markdownTable(rows)}\n\n${verdict}`;
}
