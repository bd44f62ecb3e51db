import { type QuireClient, quireClient } from "../client.ts";
import { analyze } from "../database.ts";
import { createOrg, createRepo, editRepo, fixturePath, hotFile, writeTree } from "../fixtures.ts";
import { type Budget, type LoadResult, percentile, runLoad } from "../load.ts";
import { progress } from "../log.ts";
import { phaseRunner, sentBy } from "../phases.ts";
import { cpuTable, markdownTable, type Row } from "../report.ts";
import type { QuireProcess } from "../server.ts";
import { OLD_SEQUENCE, PAGE } from "./reads.ts";

/**
 * `npm run bench -- --only reads`: the read path against the HTTP floor of the same server, in the
 * same run (issue 22). A 10,000-file repo with a history of 1-file edits (every 10th to one of 10
 * hot files), then one client at a time for the latencies and 16 clients for the mix.
 */

/** The targets, as the most a read's p50 may be over the floor's p50 (1 client). */
export const READ_PATH_TARGETS = { tree: 2.5, file: 2, history: 2.5, mixShareOfFloor: 0.4 };

const FILES = 10_000;
const MIX_CLIENTS = 16;

interface ReadPathPlan {
  edits: number;
  single: Budget;
  mix: Budget;
}

const FULL_PLAN: ReadPathPlan = {
  edits: 10_000,
  single: { maxRequests: 2_000, maxSeconds: 6 },
  mix: { maxRequests: 20_000, maxSeconds: 8 },
};
const QUICK_PLAN: ReadPathPlan = {
  edits: 1_000,
  single: { maxRequests: 300, maxSeconds: 2 },
  mix: { maxRequests: 3_000, maxSeconds: 2 },
};

interface Fixture {
  repo: string;
  /** The sequence right after the bulk commits: every file exists, none edited yet. */
  treeComplete: number;
  /** A hot file: one of every 10 edits goes to one of the 10, so each has edits/100 versions. */
  hot: string;
  /** How many versions `hot` has (its history's length). */
  hotVersions: number;
}

/** One kind of read, request `i` of a loop; resolves once the answer is checked. */
type Read = (q: QuireClient, f: Fixture, i: number) => Promise<void>;

const treePage =
  (at: (f: Fixture) => number | undefined): Read =>
  async (q, f) => {
    const at_ = at(f);
    const query = { limit: String(PAGE), ...(at_ === undefined ? {} : { at: String(at_) }) };
    const body = await q.get("/repos/:repo*/-/tree", { params: { repo: f.repo }, query });
    if (body.entries.length !== PAGE)
      throw new Error(`tree: expected ${PAGE} entries, got ${body.entries.length}`);
  };

/** Hot and cold files in turn, so an old read sometimes walks a long chain of versions. */
const fileAt =
  (at: number | undefined): Read =>
  async (q, f, i) => {
    const path = i % 2 === 0 ? fixturePath(hotFile((i / 2) % 10, FILES)) : fixturePath((i * 37) % FILES);
    const query = at === undefined ? {} : { at: String(at) };
    const body = await q.get("/repos/:repo*/-/file/:path*", { params: { repo: f.repo, path }, query });
    if (typeof body.content !== "string") throw new Error(`file ${path}: no content`);
  };

/** A full page when the hot file has 100 versions (10,000 edits); fewer if the build was cut short. */
const historyPage: Read = async (q, f) => {
  const body = await q.get("/repos/:repo*/-/file/:path*/history", { params: { repo: f.repo, path: f.hot } });
  const expected = Math.min(PAGE, f.hotVersions);
  if (body.entries.length !== expected)
    throw new Error(`history: expected ${expected} entries, got ${body.entries.length}`);
};

const floor: Read = async (q) => {
  await q.getPath("/healthz");
};

const READS: { id: string; label: string; read: Read; target: keyof typeof READ_PATH_TARGETS }[] = [
  { id: "tree-head", label: "Tree page at the head", read: treePage(() => undefined), target: "tree" },
  {
    id: "tree-early",
    label: "Tree page at an early at=",
    read: treePage((f) => f.treeComplete),
    target: "tree",
  },
  { id: "file-head", label: "File read at the head", read: fileAt(undefined), target: "file" },
  {
    id: "file-old",
    label: `File read at an old sequence (at=${OLD_SEQUENCE})`,
    read: fileAt(OLD_SEQUENCE),
    target: "file",
  },
  { id: "history", label: "File history page (a hot file)", read: historyPage, target: "history" },
];

/** Tree pages (head and early) and file reads (head and old) in turn. */
const mixed: Read = (q, f, i) => {
  const reads = [READS[0], READS[2], READS[1], READS[3]];
  const pick = reads[i % reads.length] ?? READS[0];
  return (pick as (typeof READS)[number]).read(q, f, Math.floor(i / reads.length));
};

async function buildFixture(q: QuireClient, plan: ReadPathPlan): Promise<Fixture> {
  await createOrg(q);
  const repo = await createRepo(q, "reads");
  progress(`reads: building ${repo}: ${FILES} files, then ${plan.edits} edits`);
  const treeComplete = await writeTree(q, repo, FILES);
  await editRepo(q, repo, { files: FILES, edits: plan.edits, concurrency: 16, maxSeconds: 900 });
  const hot = fixturePath(hotFile(1, FILES));
  const history = await q.get("/repos/:repo*/-/file/:path*/history", {
    params: { repo, path: hot },
    query: { limit: "1000" },
  });
  return { repo, treeComplete, hot, hotVersions: history.entries.length };
}

const loadOf = (label: string, q: QuireClient, f: Fixture, read: Read, concurrency: number, budget: Budget) =>
  runLoad({ label, concurrency, warmup: 50, ...budget, send: (i) => read(q, f, i) });

/** Latencies of one kind of request within a paired loop. */
interface Side {
  latencies: number[];
  errors: number;
  firstError?: string;
}

const p50Of = (side: Side) =>
  percentile(
    [...side.latencies].sort((a, b) => a - b),
    50,
  );
const p99Of = (side: Side) =>
  percentile(
    [...side.latencies].sort((a, b) => a - b),
    99,
  );

/**
 * One client sending a floor request and a read in turn, each timed on its own: on a machine shared
 * with other work, the load moves from one second to the next, and a floor measured in another
 * phase than the read it divides would carry that drift into the ratio.
 */
async function paired(q: QuireClient, f: Fixture, read: Read, budget: Budget) {
  const sides = { floor: { latencies: [], errors: 0 } as Side, read: { latencies: [], errors: 0 } as Side };
  const timed = async (side: Side, work: () => Promise<void>) => {
    const t0 = performance.now();
    try {
      await work();
      side.latencies.push(performance.now() - t0);
    } catch (err) {
      side.errors++;
      side.firstError ??= err instanceof Error ? err.message : String(err);
    }
  };
  const load = await runLoad({
    label: "paired",
    concurrency: 1,
    warmup: 25,
    ...budget,
    send: async (i) => {
      if (i < 25) {
        await floor(q, f, i); // the warmup: not timed
        return read(q, f, i);
      }
      await timed(sides.floor, () => floor(q, f, i));
      await timed(sides.read, () => read(q, f, i));
    },
  });
  return { ...sides, load };
}

const ratioRow = (label: string, r: Side, floorSide: Side, target: number): Row => {
  const ratio = p50Of(r) / p50Of(floorSide);
  return {
    scenario: label,
    result: `n=${r.latencies.length}, floor p50 beside it ${p50Of(floorSide).toFixed(2)} ms`,
    p50Ms: p50Of(r),
    p99Ms: p99Of(r),
    ratio,
    ratioOf: "of the floor's p50 beside it",
    target: `at most ${target}x`,
    met: ratio <= target,
    errors: r.errors,
  };
};

/** Requests per second over several slices of a loop, alternated with another loop's slices. */
const rateOf = (slices: LoadResult[]) => {
  const requests = slices.reduce((n, r) => n + r.requests, 0);
  const seconds = slices.reduce((n, r) => n + r.seconds, 0);
  return { requests, perSecond: requests / seconds, errors: slices.reduce((n, r) => n + r.errors, 0) };
};

/** Slices of the 16-client loops, floor and mix in turn, for the same reason as `paired`. */
const SLICES = 4;

/** Builds the fixture on `server`, measures every read and the mix; answers the tables. */
export async function measureReadPath(server: QuireProcess, quick: boolean): Promise<string> {
  const plan = quick ? QUICK_PLAN : FULL_PLAN;
  const q = quireClient(server.url);
  const f = await buildFixture(q, plan);
  await analyze(server.databaseUrl);
  const phases = phaseRunner(server);
  const rows: Row[] = [];
  const floors: Side = { latencies: [], errors: 0 };
  for (const c of READS) {
    const pair = await phases.run(
      `${c.id} (and as many floors)`,
      () => paired(q, f, c.read, plan.single),
      (r) => sentBy(r.load) * 2,
    );
    floors.latencies.push(...pair.floor.latencies);
    floors.errors += pair.floor.errors;
    rows.push(ratioRow(c.label, pair.read, pair.floor, READ_PATH_TARGETS[c.target]));
  }
  rows.unshift({
    scenario: "HTTP floor (GET /healthz), 1 client, beside the reads",
    result: `n=${floors.latencies.length}`,
    p50Ms: p50Of(floors),
    p99Ms: p99Of(floors),
    errors: floors.errors,
  });
  const slice = { maxRequests: plan.mix.maxRequests / SLICES, maxSeconds: plan.mix.maxSeconds / SLICES };
  const floorSlices: LoadResult[] = [];
  const mixSlices: LoadResult[] = [];
  for (let k = 0; k < SLICES; k++) {
    floorSlices.push(
      await phases.run(
        `floor, ${MIX_CLIENTS} clients (${k + 1})`,
        () => loadOf("floor", q, f, floor, MIX_CLIENTS, slice),
        sentBy,
      ),
    );
    mixSlices.push(
      await phases.run(
        `mix, ${MIX_CLIENTS} clients (${k + 1})`,
        () => loadOf("mix", q, f, mixed, MIX_CLIENTS, slice),
        sentBy,
      ),
    );
  }
  const floor16 = rateOf(floorSlices);
  const mix = rateOf(mixSlices);
  const share = mix.perSecond / floor16.perSecond;
  rows.push(
    {
      scenario: `HTTP floor, ${MIX_CLIENTS} clients`,
      result: `${floor16.perSecond.toFixed(0)}/s (n=${floor16.requests})`,
      errors: floor16.errors,
    },
    {
      scenario: `${MIX_CLIENTS} clients: tree pages and file reads in turn`,
      result: `${mix.perSecond.toFixed(0)}/s (n=${mix.requests})`,
      ratio: share,
      ratioOf: `of the floor's requests/s at ${MIX_CLIENTS} clients`,
      target: `at least ${READ_PATH_TARGETS.mixShareOfFloor}x`,
      met: share >= READ_PATH_TARGETS.mixShareOfFloor,
      errors: mix.errors,
    },
  );
  // The table marks a row with errors; the run fails, but the table is still printed.
  for (const r of rows.filter((r) => r.errors > 0)) {
    progress(`FAILED requests in "${r.scenario}"`);
    process.exitCode = 1;
  }
  return `${markdownTable(rows)}\n\n${cpuTable(phases.records)}`;
}
