import { progress } from "./log.ts";

/** A bounded request loop: stops at `maxRequests` or after `maxSeconds`, whichever comes first. */
export interface LoadOptions {
  label: string;
  /** Requests in flight at once: each worker sends its next request when its previous one answered. */
  concurrency: number;
  maxRequests: number;
  maxSeconds: number;
  /** Requests sent first and left out of the figures: they warm connections, caches and the JIT. */
  warmup?: number;
  /** Sends request `i` (0-based, in send order) from `worker`; rejects when the request failed. */
  send: (i: number, worker: number) => Promise<void>;
}

/** How long a measured loop may run: at most this many requests and this many seconds. */
export interface Budget {
  maxRequests: number;
  maxSeconds: number;
}

export interface LoadResult {
  /** Requests answered in the measured loop; failed ones are in `errors`, warmup ones in `warmup`. */
  requests: number;
  warmup: number;
  errors: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
}

/** Nearest-rank percentile of ascending `sorted`; 0 when there is nothing to rank. */
export function percentile(sorted: number[], p: number): number {
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? 0; // undefined only when sorted is empty (rank 0)
}

/** Runs the warmup (if any), then the measured loop, and returns its throughput and latencies. */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const warmup = opts.warmup ?? 0;
  if (warmup > 0) await loop({ ...opts, maxRequests: warmup }, 0, false);
  return { ...(await loop(opts, warmup, true)), warmup };
}

async function loop(
  opts: LoadOptions,
  firstIndex: number,
  report: boolean,
): Promise<Omit<LoadResult, "warmup">> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const deadline = start + opts.maxSeconds * 1000;
  const ticker = report
    ? setInterval(() => {
        const rate = latencies.length / ((performance.now() - start) / 1000);
        progress(`${opts.label}: ${latencies.length}/${opts.maxRequests} done, ${rate.toFixed(0)}/s`);
      }, 10_000)
    : undefined;
  const worker = async (w: number) => {
    while (next < opts.maxRequests && performance.now() < deadline) {
      const i = firstIndex + next++;
      const t0 = performance.now();
      try {
        await opts.send(i, w);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, (_, w) => worker(w)));
  } finally {
    clearInterval(ticker);
  }
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const sum = latencies.reduce((a, b) => a + b, 0);
  return {
    requests: latencies.length,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    meanMs: latencies.length ? sum / latencies.length : 0,
    maxMs: latencies.at(-1) ?? 0,
  };
}
