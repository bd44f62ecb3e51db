import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { openSse, type SseClient } from "../../test/events/sse.ts";
import { freePort } from "../../test/support/ports.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";
import { BENCH_IDENTITY, startQuire } from "../server.ts";

/**
 * SSE delivery latency: from a commit's HTTP response to an SSE client receiving its event, with
 * `clients` streams spread over two Quire processes on one database (the local fan-out,
 * LISTEN/NOTIFY). Commits alternate between the two instances, one at a time, so each latency is
 * the fan-out's own, not queueing behind other commits. Standalone: bench/run.ts does not call it;
 * `npx tsx bench/scenarios/sse.ts` runs it and prints the result.
 */

export interface SseBenchResult {
  clients: number;
  instances: 2;
  commits: number;
  /** Deliveries measured: commits × clients. */
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Deliveries that arrived before the commit's own response did (counted as 0 ms). */
  beforeResponse: number;
  /** Target: p99 under 250 ms. */
  targetMet: boolean;
}

export const TARGET_P99_MS = 250;
const REPO_ROOT = path.resolve(import.meta.dirname, "../..");

/** A second Quire process against `databaseUrl` (the first one's embedded PostgreSQL). */
async function secondQuire(databaseUrl: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "functions/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      DEV_IDENTITY: BENCH_IDENTITY,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the second quire exited (${child.exitCode})`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error("the second quire did not start");
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export async function measureSseLatency(
  opts: { clients?: number; commits?: number; pauseMs?: number } = {},
): Promise<SseBenchResult> {
  const clients = opts.clients ?? 100;
  const commits = opts.commits ?? 200;
  const pauseMs = opts.pauseMs ?? 20;
  progress("sse: starting two quire processes on one database");
  const first = await startQuire();
  let second: Awaited<ReturnType<typeof secondQuire>> | undefined;
  const streams: SseClient[] = [];
  try {
    second = await secondQuire(first.databaseUrl);
    const urls = [first.url, second.url];
    const org = `ssebench${Date.now().toString(36)}`;
    const repo = `${org}/docs`;
    if ((await post(`${first.url}/orgs`, { name: org })).status !== 201)
      throw new Error("could not create the org");
    if ((await post(`${first.url}/repos`, { owner: org, name: repo })).status !== 201)
      throw new Error("could not create the repo");
    progress(`sse: opening ${clients} streams over the two instances`);
    for (let i = 0; i < clients; i++) {
      const s = await openSse(urls[i % 2]!, `/repos/${repo}/-/events?types=com.svc.commit.created`);
      if (s.status !== 200) throw new Error(`stream ${i} answered ${s.status}`);
      streams.push(s);
    }
    progress(`sse: ${commits} commits, alternating instances`);
    const responded = new Map<number, number>(); // sequence -> response time
    for (let i = 0; i < commits; i++) {
      const res = await post(`${urls[i % 2]}/repos/${repo}/-/commit`, {
        branch: "main",
        message: `bench ${i}`,
        files: [{ path: "bench.md", content: Buffer.from(`v${i}`).toString("base64") }],
      });
      const at = performance.now();
      if (res.status !== 201)
        throw new Error(`commit ${i} answered ${res.status}: ${JSON.stringify(res.body)}`);
      responded.set(res.body.sequence as number, at);
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
    const want = commits;
    const deadline = Date.now() + 30_000;
    while (streams.some((s) => s.events().length < want) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const latencies: number[] = [];
    let beforeResponse = 0;
    for (const s of streams) {
      const events = s.events();
      if (events.length !== want) throw new Error(`a stream got ${events.length} of ${want} events`);
      for (const e of events) {
        const sent = responded.get(e.envelope.data.sequence as number);
        if (sent === undefined) throw new Error(`an event for an unknown commit: ${e.id}`);
        const ms = e.at - sent;
        if (ms < 0) beforeResponse++;
        latencies.push(Math.max(0, ms));
      }
    }
    latencies.sort((a, b) => a - b);
    const p99Ms = percentile(latencies, 99);
    return {
      clients,
      instances: 2,
      commits,
      deliveries: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms,
      maxMs: latencies.at(-1) ?? 0,
      beforeResponse,
      targetMet: p99Ms < TARGET_P99_MS,
    };
  } finally {
    for (const s of streams) s.close();
    await second?.stop();
    await first.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await measureSseLatency();
  console.log(JSON.stringify(result, null, 2));
}
