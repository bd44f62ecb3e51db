import { progress } from "../log.ts";
import { BENCH_IDENTITY, startQuire } from "../server.ts";

/** Starts measured; odd, so the median is one of them. */
const STARTS = 3;
/** Issue 22's target for one process as `npm start` runs it. */
const TARGET_MIB = 80;

const mib = (kib: number) => kib / 1024;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/**
 * RSS right after start, alone (docs/benchmarks.md, "Where the memory goes"): `npm start`'s
 * server (its bundle and Node flags, its own embedded PostgreSQL, not counted) started STARTS
 * times with nothing else running in it (no loop probe), its VmRSS read once `/healthz` answers
 * (a first start: it migrated a new database), then after its first web page, which loads the
 * pages' libraries, and how long that page took; and a second instance started on its migrated
 * database (DATABASE_URL: no migration, no embedded PostgreSQL).
 */
export async function measureStartMemory(): Promise<string> {
  const rows: { startMiB: number; pageMiB: number; pageMs: number; secondMiB: number }[] = [];
  for (let i = 0; i < STARTS; i++) {
    progress(`start ${i + 1} of ${STARTS}`);
    const server = await startQuire({ name: `start-${i + 1}` });
    try {
      const start = await server.memory();
      const t0 = performance.now();
      const res = await fetch(`${server.url}/ui`, { headers: { accept: "text/html" } });
      await res.text();
      const pageMs = performance.now() - t0;
      if (!res.ok) throw new Error(`GET /ui as ${BENCH_IDENTITY} answered ${res.status}`);
      const pageMiB = mib((await server.memory()).rssKiB);
      const second = await startQuire({ name: `second-${i + 1}`, sharing: server });
      const secondMiB = mib((await second.memory()).rssKiB);
      await second.stop();
      rows.push({ startMiB: mib(start.rssKiB), pageMiB, pageMs, secondMiB });
    } finally {
      await server.stop();
    }
  }
  const line = (label: string, xs: number[], unit: string, target = "") =>
    `| ${label} | ${median(xs).toFixed(1)} ${unit} | ${Math.min(...xs).toFixed(1)} to ${Math.max(...xs).toFixed(1)} | ${target} |`;
  const starts = rows.map((r) => r.startMiB);
  const met = median(starts) <= TARGET_MIB ? "yes" : "**no**";
  return [
    `| ${STARTS} starts as \`npm start\` runs it | median | range | target |`,
    "|---|---:|---|---|",
    line("RSS after start (a new database: it migrated)", starts, "MiB", `at most ${TARGET_MIB} MiB: ${met}`),
    line(
      "RSS after start on a migrated database",
      rows.map((r) => r.secondMiB),
      "MiB",
    ),
    line(
      "RSS after the first web page (`GET /ui`)",
      rows.map((r) => r.pageMiB),
      "MiB",
    ),
    line(
      "the first web page",
      rows.map((r) => r.pageMs),
      "ms",
    ),
  ].join("\n");
}
