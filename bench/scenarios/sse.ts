import { pathToFileURL } from "node:url";
import { openSse, type SseClient } from "../../test/events/sse.ts";
import { type QuireClient, quireClient } from "../client.ts";
import { commit } from "../fixtures.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";
import { startQuire, stopEveryQuire } from "../server.ts";
import type { PhaseRun } from "./webhooks.ts";

/**
 * SSE delivery latency: from a commit's HTTP response to an SSE client receiving its event, with
 * `clients` streams spread over two Quire processes on one database (the local fan-out,
 * LISTEN/NOTIFY), half on each. Commits alternate between the two instances, one at a time with a
 * pause between them, so each latency is the fan-out's own, not queueing behind other commits.
 *
 * `npm run bench` runs it on the harness's server and a second instance on its database
 * (bench/events.ts); `npx tsx bench/scenarios/sse.ts` starts both itself and prints the result.
 */

export interface SsePlan {
  clients: number;
  /** Measured commits, at most: the loop also stops after `maxSeconds`. */
  commits: number;
  /** Commits first, to both instances, whose deliveries are left out: they warm both hubs' paths. */
  warmup: number;
  pauseMs: number;
  maxSeconds: number;
  /** Cap on the wait for the last deliveries; what has not arrived by then counts as errors. */
  deliverySeconds: number;
}

export const SSE_PLAN: SsePlan = {
  clients: 100,
  commits: 200,
  warmup: 10,
  pauseMs: 20,
  maxSeconds: 60,
  deliverySeconds: 30,
};

export const TARGET_P99_MS = 250;

export interface SseBenchResult {
  clients: number;
  instances: 2;
  /** Measured commits made (warmup left out). */
  commits: number;
  /** Deliveries measured: commits × clients when none went missing. */
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Deliveries that arrived before the commit's own response did (counted as 0 ms). */
  beforeResponse: number;
  /** Target: p99 under 250 ms. */
  targetMet: boolean;
  /** Failed commits and stream opens, and deliveries missing when the wait for them ended. */
  errors: number;
  firstError?: string;
}

const unmeasured: PhaseRun = (_name, work) => work();

/** The first of `pair` for even `i`, the second for odd. */
const alternate = <T>(pair: [T, T], i: number): T => (i % 2 === 0 ? pair[0] : pair[1]);

/**
 * Opens the streams on `repo` (which must exist and see no other commits), alternating between
 * `urls`, and measures; the phase `sse` is the measured commits and the wait for their events.
 * Every stream is closed at the end, whatever happened.
 */
export async function measureSse(
  urls: [string, string],
  repo: string,
  plan: SsePlan = SSE_PLAN,
  run: PhaseRun = unmeasured,
): Promise<SseBenchResult> {
  const clients: [QuireClient, QuireClient] = [quireClient(urls[0]), quireClient(urls[1])];
  const streams: SseClient[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const failed = (what: string) => {
    errors++;
    firstError ??= what;
  };
  try {
    progress(`sse: opening ${plan.clients} streams over the two instances`);
    for (let i = 0; i < plan.clients; i++) {
      const s = await openSse(alternate(urls, i), `/repos/${repo}/-/events?types=com.svc.commit.created`);
      if (s.status === 200) streams.push(s);
      else {
        s.close();
        failed(`stream ${i} answered ${s.status}: ${JSON.stringify(s.body)}`);
      }
    }
    /** One commit through instance i % 2; its sequence and when its response arrived. */
    const commitVia = async (i: number, message: string) => {
      const sequence = await commit(alternate(clients, i), repo, "main", message, [
        { path: "bench.md", text: message },
      ]);
      return { sequence, at: performance.now() };
    };
    const pause = () => new Promise((r) => setTimeout(r, plan.pauseMs));
    // Event messages a stream has received, counted without parsing them (this polls while the
    // last deliveries arrive, on the CPUs the servers use). The repo is new and only these
    // commits touch it, so each stream should end with one event per commit.
    const received = (s: SseClient) =>
      s.messages.reduce((n, m) => n + (m.data !== undefined && m.event === undefined ? 1 : 0), 0);
    let made = 0;
    const waitAll = async () => {
      const deadline = performance.now() + plan.deliverySeconds * 1000;
      while (streams.some((s) => received(s) < made) && performance.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
    };

    progress(`sse: ${plan.warmup} warmup commits`);
    for (let i = 0; i < plan.warmup; i++) {
      try {
        await commitVia(i, `sse warmup ${i}`);
        made++;
      } catch (err) {
        failed(err instanceof Error ? err.message : String(err));
      }
      await pause();
    }
    await waitAll();

    progress(`sse: up to ${plan.commits} commits, alternating instances`);
    const responded = await run(
      "sse (per commit)",
      async () => {
        const times = new Map<number, number>(); // sequence -> response time
        const deadline = performance.now() + plan.maxSeconds * 1000;
        for (let i = 0; i < plan.commits && performance.now() < deadline; i++) {
          try {
            const { sequence, at } = await commitVia(i, `sse ${i}`);
            times.set(sequence, at);
            made++;
          } catch (err) {
            failed(err instanceof Error ? err.message : String(err));
          }
          await pause();
        }
        await waitAll();
        return times;
      },
      (times) => times.size,
    );

    const latencies: number[] = [];
    let beforeResponse = 0;
    let missing = 0;
    for (const s of streams) {
      const got = new Set<number>();
      for (const e of s.events()) {
        const sequence = e.envelope.data?.sequence as number;
        const sent = responded.get(sequence);
        if (sent === undefined || got.has(sequence)) continue; // a warmup event (or a repeat)
        got.add(sequence);
        const ms = e.at - sent;
        if (ms < 0) beforeResponse++;
        latencies.push(Math.max(0, ms));
      }
      missing += responded.size - got.size;
    }
    if (missing > 0) {
      errors += missing;
      firstError ??= `${missing} deliveries had not arrived ${plan.deliverySeconds} s after the last commit`;
    }
    latencies.sort((a, b) => a - b);
    const p99Ms = percentile(latencies, 99);
    return {
      clients: plan.clients,
      instances: 2,
      commits: responded.size,
      deliveries: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms,
      maxMs: latencies.at(-1) ?? 0,
      beforeResponse,
      targetMet: latencies.length > 0 && p99Ms < TARGET_P99_MS,
      errors,
      ...(firstError === undefined ? {} : { firstError }),
    };
  } finally {
    for (const s of streams) s.close();
  }
}

async function main(): Promise<void> {
  progress("sse: starting two quire processes on one database");
  const onSignal = () => void stopEveryQuire().finally(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const first = await startQuire();
    const second = await startQuire({ sharing: first, name: "quire-2" });
    const q = quireClient(first.url);
    const org = `ssebench${Date.now().toString(36)}`;
    await q.post("/orgs", { body: { name: org } });
    await q.post("/repos", { body: { owner: org, name: `${org}/docs` } });
    const result = await measureSse([first.url, second.url], `${org}/docs`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await stopEveryQuire();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
