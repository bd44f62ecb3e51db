import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { withDb } from "../database.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";
import { startQuire } from "../server.ts";

/**
 * Webhook delivery throughput: 20 subscriptions of one repo, each to its own path of one local
 * receiver (200 at once, signatures on), with Quire's local queue worker as `npm start` runs it.
 *
 * - backlog: every subscription suspended, `commits` events committed (held), then all 20 resumed
 *   at once; deliveries per second from the first resume to the last delivery received. This is
 *   the worker's own rate, with nothing else running.
 * - live: `commits` more commits one after another, delivered while they happen; deliveries per
 *   second over the whole run, and the latency from a commit's response to each delivery.
 *
 * Standalone: bench/run.ts does not call it; `npx tsx bench/scenarios/webhooks.ts` runs it and
 * prints the result.
 */

export interface WebhookBenchResult {
  subscriptions: number;
  commits: number;
  backlog: { deliveries: number; seconds: number; deliveriesPerSecond: number };
  live: {
    deliveries: number;
    seconds: number;
    deliveriesPerSecond: number;
    commitsPerSecond: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
  };
}

interface Receiver {
  url: string;
  /** Arrival time (performance.now()) of every delivery, with its event's commit message. */
  arrivals: { at: number; message: string }[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals: Receiver["arrivals"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      arrivals.push({ at, message: String(body.data?.message ?? "") });
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function call(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function waitFor(count: () => number, want: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (count() < want) {
    if (Date.now() > deadline)
      throw new Error(`got ${count()} of ${want} deliveries in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function measureWebhookThroughput(
  opts: { subscriptions?: number; commits?: number } = {},
): Promise<WebhookBenchResult> {
  const subscriptions = opts.subscriptions ?? 20;
  const commits = opts.commits ?? 250;
  const receiver = await startReceiver();
  // The receiver is on 127.0.0.1: the server must be allowed to reach it.
  const previous = process.env["SVC_WEBHOOK_ALLOW_PRIVATE"];
  process.env["SVC_WEBHOOK_ALLOW_PRIVATE"] = "true";
  progress("webhooks: starting quire");
  const quire = await startQuire().finally(() => {
    if (previous === undefined) delete process.env["SVC_WEBHOOK_ALLOW_PRIVATE"];
    else process.env["SVC_WEBHOOK_ALLOW_PRIVATE"] = previous;
  });
  try {
    const org = `hooks${Date.now().toString(36)}`;
    const repo = `${org}/docs`;
    await call("POST", `${quire.url}/orgs`, { name: org });
    await call("POST", `${quire.url}/repos`, { owner: org, name: repo });
    const ids: string[] = [];
    for (let i = 0; i < subscriptions; i++) {
      const res = await call("POST", `${quire.url}/subscriptions`, {
        repo,
        event_types: ["com.svc.commit.created"],
        backend: "webhook",
        config: { url: `${receiver.url}/s/${i}`, secret: `secret-${i}` },
      });
      ids.push(res.body.id);
    }
    const commitOne = async (message: string) => {
      await call("POST", `${quire.url}/repos/${repo}/-/commit`, {
        branch: "main",
        message,
        files: [{ path: "bench.md", content: Buffer.from(message).toString("base64") }],
      });
      return performance.now();
    };

    progress(`webhooks: backlog of ${commits} events x ${subscriptions} subscriptions`);
    await withDb(quire.databaseUrl, (db) => db.query("UPDATE subscriptions SET suspended_at = now()"));
    for (let i = 0; i < commits; i++) await commitOne(`backlog ${i}`);
    const backlogDeliveries = commits * subscriptions;
    const started = performance.now();
    await Promise.all(ids.map((id) => call("POST", `${quire.url}/subscriptions/${id}/resume`)));
    await waitFor(() => receiver.arrivals.length, backlogDeliveries, 300_000);
    const backlogSeconds = (receiver.arrivals.at(-1)!.at - started) / 1000;

    progress(`webhooks: ${commits} live commits`);
    receiver.arrivals.length = 0;
    const responded = new Map<string, number>();
    const liveStart = performance.now();
    for (let i = 0; i < commits; i++) responded.set(`live ${i}`, await commitOne(`live ${i}`));
    const commitSeconds = (performance.now() - liveStart) / 1000;
    const liveDeliveries = commits * subscriptions;
    await waitFor(() => receiver.arrivals.length, liveDeliveries, 300_000);
    const liveSeconds = (receiver.arrivals.at(-1)!.at - liveStart) / 1000;
    const latencies = receiver.arrivals
      .map((a) => Math.max(0, a.at - (responded.get(a.message) ?? a.at)))
      .sort((a, b) => a - b);
    const round = (n: number) => Math.round(n * 10) / 10;
    return {
      subscriptions,
      commits,
      backlog: {
        deliveries: backlogDeliveries,
        seconds: round(backlogSeconds),
        deliveriesPerSecond: Math.round(backlogDeliveries / backlogSeconds),
      },
      live: {
        deliveries: liveDeliveries,
        seconds: round(liveSeconds),
        deliveriesPerSecond: Math.round(liveDeliveries / liveSeconds),
        commitsPerSecond: Math.round(commits / commitSeconds),
        p50Ms: round(percentile(latencies, 50)),
        p99Ms: round(percentile(latencies, 99)),
        maxMs: round(latencies.at(-1) ?? 0),
      },
    };
  } finally {
    await quire.stop();
    await receiver.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await measureWebhookThroughput();
  console.log(JSON.stringify(result, null, 2));
}
