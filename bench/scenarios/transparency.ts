import type { QuireClient } from "../client.ts";
import { quireClient } from "../client.ts";
import { withDb } from "../database.ts";
import { commit, createOrg, createRepo } from "../fixtures.ts";
import { type LoadResult, runLoad } from "../load.ts";
import { progress } from "../log.ts";
import { markdownTable, type Row } from "../report.ts";
import type { QuireProcess } from "../server.ts";
import { startQuire } from "../server.ts";
import { COMMIT_CLIENTS } from "./commits.ts";
import { measureHttpFloor } from "./reads.ts";

/** The size: proofs on a repo of a million commits. */
const BIG_LOG = 1_000_000;
const TARGET_P50_MS = 5;

// The million commits are written straight into the tables, not through the API (which would take
// hours at a few hundred commits a second): one commit row per sequence on main, its hash the
// SHA-256 of the sequence, then tlog_build (migration 0022) builds the log level by level exactly
// as the migration does for existing repos. The proofs read only the log, so how its leaves were
// made does not change what a proof costs.
const bulk_commits_insert = `
  INSERT INTO commits (repo_id, sequence, branch_id, message, author, created_at, prev_hash, hash)
  SELECT r.id, s, b.id, 'bulk', 'bench@quire.test', now(), '', encode(sha256(int8send(s)), 'hex')
  FROM repos r JOIN branches b ON b.repo_id = r.id AND b.name = 'main', generate_series(1::bigint, $2) AS s
  WHERE r.name = $1`;
const bulk_heads_update = `
  WITH r AS (UPDATE repos SET last_sequence = $2 WHERE name = $1 RETURNING id)
  UPDATE branches SET head_sequence = $2 FROM r WHERE branches.repo_id = r.id AND branches.name = 'main'`;
const bulk_log_build = `SELECT tlog_build(id) FROM repos WHERE name = $1`;

async function buildBigLog(databaseUrl: string, repo: string, size: number): Promise<void> {
  progress(`transparency: writing ${size} commits and their log in SQL`);
  const started = performance.now();
  await withDb(databaseUrl, async (db) => {
    await db.query(bulk_commits_insert, [repo, size]);
    await db.query(bulk_heads_update, [repo, size]);
    await db.query(bulk_log_build, [repo]);
    await db.query("VACUUM (ANALYZE) commits, tlog_nodes, repos");
  });
  progress(`transparency: built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** A random whole number in [lo, hi]. */
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

async function measureProofs(q: QuireClient, repo: string, size: number, quick: boolean) {
  const budget = { maxRequests: quick ? 300 : 3_000, maxSeconds: quick ? 3 : 15 };
  const run = (label: string, send: () => Promise<unknown>) =>
    runLoad({ label, concurrency: 1, warmup: 50, ...budget, send: async () => void (await send()) });
  const params = { repo };
  return {
    checkpoint: await run("checkpoint", () => q.getPath(`/repos/${repo}/-/checkpoint`)),
    inclusion: await run("inclusion proofs", () =>
      q.get("/repos/:repo*/-/proof/inclusion", {
        params,
        query: { sequence: String(between(1, size)), size: String(size) },
      }),
    ),
    consistency: await run("consistency proofs", () =>
      q.get("/repos/:repo*/-/proof/consistency", {
        params,
        query: { from: String(between(1, size - 1)), to: String(size) },
      }),
    ),
  };
}

const latencyRow = (scenario: string, r: LoadResult): Row => ({
  scenario,
  result: `p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms (n=${r.requests})`,
  p50Ms: r.p50Ms,
  p99Ms: r.p99Ms,
  target: `p50 < ${TARGET_P50_MS} ms`,
  met: r.p50Ms < TARGET_P50_MS,
  errors: r.errors,
});

/** 16 clients committing 1-file edits on main of a fresh repo, as the "main" commit layout does. */
async function commitRate(q: QuireClient, repo: string, budget: { maxRequests: number; maxSeconds: number }) {
  return runLoad({
    label: `commits on ${repo}`,
    concurrency: COMMIT_CLIENTS,
    warmup: 4 * COMMIT_CLIENTS,
    ...budget,
    send: async (i, w) => {
      const path = `load/client-${w}/f${i % 50}.md`;
      await commit(q, repo, "main", `load ${i}`, [{ path, text: `commit ${i} by client ${w}\n` }]);
    },
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * The commit rate with the log against the same code without it: `QUIRE_BENCH_BASE_ROOT` names a
 * checkout of Quire before the log (for example `git archive <commit> | tar -x -C <dir>`, with
 * `node_modules` linked in), started beside this one with its own embedded PostgreSQL. Rounds
 * alternate between the two, each on a fresh repo, so that the machine's drift falls on both;
 * QUIRE_BENCH_TLOG_ROUNDS sets how many (5 unless said).
 */
async function commitsAgainstBase(q: QuireClient, quick: boolean): Promise<Row[]> {
  const root = process.env["QUIRE_BENCH_BASE_ROOT"];
  const budget = quick ? { maxRequests: 300, maxSeconds: 3 } : { maxRequests: 2_000, maxSeconds: 10 };
  const rounds = quick ? 1 : Number(process.env["QUIRE_BENCH_TLOG_ROUNDS"] ?? 5);
  const withLog: LoadResult[] = [];
  const withoutLog: LoadResult[] = [];
  const base = root ? await startQuire({ root, name: "quire-base" }) : undefined;
  try {
    const qb = base ? quireClient(base.url) : undefined;
    if (qb) await createOrg(qb);
    for (let r = 0; r < rounds; r++) {
      const ours = async () =>
        withLog.push(await commitRate(q, await createRepo(q, `tlog-commits-${r}`), budget));
      const theirs = async () => {
        if (qb) withoutLog.push(await commitRate(qb, await createRepo(qb, `tlog-commits-${r}`), budget));
      };
      // Which goes first alternates, so that neither side always meets the machine warmer.
      if (r % 2 === 0) {
        await ours();
        await theirs();
      } else {
        await theirs();
        await ours();
      }
    }
  } finally {
    await base?.stop();
  }
  const rate = (rs: LoadResult[]) => median(rs.map((x) => x.perSecond));
  // Each round's two runs are neighbours in time; the median of their ratios is the comparison
  // that the machine's drift from round to round (often 30%) does not move.
  const ratio = median(withLog.map((x, r) => x.perSecond / (withoutLog[r]?.perSecond ?? Number.NaN)));
  const errors = (rs: LoadResult[]) => rs.reduce((n, x) => n + x.errors, 0);
  const rows: Row[] = [
    {
      scenario: `Commit, 1 file: 16 clients on main of one repo, each appending its leaf (median of ${rounds})`,
      result: `${rate(withLog).toFixed(0)} commits/s (${withLog.map((x) => x.perSecond.toFixed(0)).join(", ")})`,
      errors: errors(withLog),
    },
  ];
  if (withoutLog.length > 0)
    rows.push({
      scenario: `The same without the log (${root}), rounds alternating (median of ${rounds})`,
      result: `${rate(withoutLog).toFixed(0)} commits/s (${withoutLog.map((x) => x.perSecond.toFixed(0)).join(", ")})`,
      ratio,
      ratioOf: "without the log, median of the rounds' ratios",
      target: ">= 0.90",
      // A round that failed requests measured nothing: its rate is no evidence either way.
      met: ratio >= 0.9 && errors(withLog) + errors(withoutLog) === 0,
      errors: errors(withoutLog),
    });
  return rows;
}

/**
 * `npm run bench -- --only transparency`: checkpoint and proof latency on a repo of a million
 * commits against the HTTP floor, then the 16-client commit rate on main of one repo (every commit
 * appending its leaf) and, with QUIRE_BENCH_BASE_ROOT, the same against the code before the log.
 */
export async function measureTransparency(server: QuireProcess, quick: boolean): Promise<string> {
  const q = quireClient(server.url);
  const size = quick ? 100_000 : BIG_LOG;
  await createOrg(q);
  const repo = await createRepo(q, "tlog-big");
  await buildBigLog(server.databaseUrl, repo, size);
  const floor = await measureHttpFloor(
    q,
    quick ? { maxRequests: 200, maxSeconds: 1 } : { maxRequests: 2_000, maxSeconds: 3 },
  );
  const proofs = await measureProofs(q, repo, size, quick);
  const commits = await commitsAgainstBase(q, quick);
  return markdownTable([
    {
      scenario: "HTTP floor: GET /healthz, 1 client",
      result: `p50 ${floor.p50Ms.toFixed(2)} ms, p99 ${floor.p99Ms.toFixed(2)} ms (n=${floor.requests})`,
      p50Ms: floor.p50Ms,
      p99Ms: floor.p99Ms,
      errors: floor.errors,
    },
    latencyRow(`GET checkpoint (signed note), ${size}-commit repo, 1 client`, proofs.checkpoint),
    latencyRow(`GET proof/inclusion, random sequence at size ${size}, 1 client`, proofs.inclusion),
    latencyRow(`GET proof/consistency, random from to ${size}, 1 client`, proofs.consistency),
    ...commits,
  ]);
}
