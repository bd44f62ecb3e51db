import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { type QuireClient, quireClient } from "../client.ts";
import { withDb } from "../database.ts";
import { commit } from "../fixtures.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";
import { type QuireProcess, startQuire } from "../server.ts";

/**
 * Webhook delivery throughput: `subscriptions` subscriptions of one repo to `commit.created`, each
 * to its own path of one receiver on 127.0.0.1 (signatures on: each has a secret), delivered by
 * the server's local queue worker as `npm start` runs it (SVC_WEBHOOK_DELIVERY=postgres).
 *
 * - backlog: every subscription suspended, `commits` commits made (their outbox rows are held),
 *   then all resumed at once; deliveries per second from the first resume to the last delivery
 *   received. The worker's own rate, with nothing else running.
 * - live: `commits` more commits one after another from one client, delivered while they happen;
 *   deliveries per second from the first commit to the last delivery, the commits' own rate, and
 *   the latency from a commit's response to each of its deliveries.
 *
 * `npm run bench` runs it on the harness's server (bench/events.ts); `npx tsx
 * bench/scenarios/webhooks.ts` runs it on a server of its own and prints the result as JSON.
 */

export interface WebhookPlan {
  subscriptions: number;
  /** Commits of the backlog, and as many again live. */
  commits: number;
  /** Cap on each of the two commit loops. */
  maxSeconds: number;
  /** Cap on each wait for the deliveries; what has not arrived by then counts as errors. */
  deliverySeconds: number;
}

export const WEBHOOK_PLAN: WebhookPlan = {
  subscriptions: 20,
  commits: 250,
  maxSeconds: 60,
  deliverySeconds: 120,
};

export interface WebhookBenchResult {
  subscriptions: number;
  backlog: {
    commits: number;
    /** Distinct deliveries received: commits × subscriptions when none went missing. */
    deliveries: number;
    seconds: number;
    deliveriesPerSecond: number;
    /** Failed commits, and deliveries that had not arrived when the wait for them ended. */
    errors: number;
  };
  live: {
    commits: number;
    deliveries: number;
    seconds: number;
    deliveriesPerSecond: number;
    /** The live commits' own rate (one client), from the first to the last response. */
    commitsPerSecond: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    errors: number;
  };
  /** Deliveries received again (at least once allows it): left out of the figures above. */
  duplicates: number;
  /** The first failure of either part. */
  firstError?: string;
}

/** Runs one step of the scenario as a phase of the bench (bench/phases.ts), or just runs it. */
export type PhaseRun = <T>(
  name: string,
  work: () => Promise<T>,
  requests?: (result: T) => number,
) => Promise<T>;
const unmeasured: PhaseRun = (_name, work) => work();

interface Receiver {
  url: string;
  /** Arrival time (performance.now()) of each distinct delivery, with its event's commit message. */
  arrivals: { at: number; message: string }[];
  /** Distinct deliveries so far of commits whose message starts with `prefix` and a space. */
  count(prefix: string): number;
  duplicates(): number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals: Receiver["arrivals"] = [];
  const seen = new Set<string>();
  const counts = new Map<string, number>();
  let duplicates = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const key = `${req.url} ${body.id}`; // one subscription's path, one event
        if (seen.has(key)) duplicates++;
        else {
          seen.add(key);
          const message = String(body.data?.message ?? "");
          arrivals.push({ at, message });
          const [prefix = ""] = message.split(" ");
          counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
        }
        res.writeHead(200).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    count: (prefix) => counts.get(prefix) ?? 0,
    duplicates: () => duplicates,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // the server's keep-alive sockets outlive the scenario
      }),
  };
}

/** Waits until `count()` reaches `want`, or `timeoutMs` passed; true when it got there. */
async function waitFor(count: () => number, want: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (count() < want) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

/**
 * Runs both parts on `server` (started by startQuire, so SVC_WEBHOOK_ALLOW_PRIVATE=true) against
 * `repo`, which must be new: its subscriptions are this scenario's alone. They are deleted at the
 * end, and the receiver closed, whatever happened.
 */
export async function measureWebhooks(
  server: QuireProcess,
  q: QuireClient,
  repo: string,
  plan: WebhookPlan = WEBHOOK_PLAN,
  run: PhaseRun = unmeasured,
): Promise<WebhookBenchResult> {
  const receiver = await startReceiver();
  const ids: string[] = [];
  const errors = { backlog: 0, live: 0 };
  let firstError: string | undefined;
  const failed = (part: keyof typeof errors, what: string, n = 1) => {
    errors[part] += n;
    firstError ??= what;
  };
  /** Up to `commits` 1-client commits within maxSeconds; the response time of each one made. */
  const commitLoop = async (prefix: keyof typeof errors) => {
    const responded = new Map<string, number>();
    const deadline = performance.now() + plan.maxSeconds * 1000;
    for (let i = 0; i < plan.commits && performance.now() < deadline; i++) {
      const message = `${prefix} ${i}`;
      try {
        await commit(q, repo, "main", message, [{ path: "bench.md", text: message }]);
        responded.set(message, performance.now());
      } catch (err) {
        failed(prefix, `${prefix} commit: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return responded;
  };
  const arrivalsOf = (prefix: string) => receiver.arrivals.filter((a) => a.message.startsWith(`${prefix} `));
  const missing = (part: keyof typeof errors, got: number, want: number) => {
    if (got < want)
      failed(
        part,
        `${part}: ${got} of ${want} deliveries arrived within ${plan.deliverySeconds} s`,
        want - got,
      );
  };
  try {
    for (let i = 0; i < plan.subscriptions; i++) {
      const sub = await q.post("/subscriptions", {
        body: {
          repo,
          event_types: ["com.svc.commit.created"],
          backend: "webhook",
          config: { url: `${receiver.url}/s/${i}`, secret: `secret-${i}` },
        },
      });
      ids.push(sub.id);
    }

    progress(`webhooks: backlog of ${plan.commits} commits x ${plan.subscriptions} subscriptions`);
    await withDb(server.databaseUrl, (db) =>
      db.query("UPDATE subscriptions SET suspended_at = now() WHERE id = ANY($1::uuid[])", [ids]),
    );
    const held = await run(
      "webhooks: backlog commits (held)",
      () => commitLoop("backlog"),
      (r) => r.size,
    );
    const backlogWant = held.size * plan.subscriptions;
    const backlog = await run(
      "webhooks: backlog drain (per delivery)",
      async () => {
        const started = performance.now();
        await Promise.all(ids.map((id) => q.post("/subscriptions/:id/resume", { params: { id }, body: {} })));
        await waitFor(() => receiver.count("backlog"), backlogWant, plan.deliverySeconds * 1000);
        const got = arrivalsOf("backlog");
        const end = got.reduce((last, a) => Math.max(last, a.at), started);
        return { deliveries: got.length, seconds: (end - started) / 1000 };
      },
      (r) => r.deliveries,
    );
    missing("backlog", backlog.deliveries, backlogWant);

    progress(`webhooks: ${plan.commits} live commits`);
    const live = await run(
      "webhooks: live (per delivery)",
      async () => {
        const started = performance.now();
        const responded = await commitLoop("live");
        const commitSeconds = (Math.max(started, ...responded.values()) - started) / 1000;
        const want = responded.size * plan.subscriptions;
        await waitFor(() => receiver.count("live"), want, plan.deliverySeconds * 1000);
        const got = arrivalsOf("live");
        missing("live", got.length, want);
        const end = got.reduce((last, a) => Math.max(last, a.at), started);
        const latencies = got
          .flatMap((a) => {
            const sent = responded.get(a.message);
            return sent === undefined ? [] : [Math.max(0, a.at - sent)];
          })
          .sort((a, b) => a - b);
        return {
          commits: responded.size,
          commitSeconds,
          deliveries: got.length,
          seconds: (end - started) / 1000,
          latencies,
        };
      },
      (r) => r.deliveries,
    );
    const rate = (n: number, seconds: number) => (seconds > 0 ? n / seconds : 0);
    return {
      subscriptions: plan.subscriptions,
      backlog: {
        commits: held.size,
        deliveries: backlog.deliveries,
        seconds: backlog.seconds,
        deliveriesPerSecond: rate(backlog.deliveries, backlog.seconds),
        errors: errors.backlog,
      },
      live: {
        commits: live.commits,
        deliveries: live.deliveries,
        seconds: live.seconds,
        deliveriesPerSecond: rate(live.deliveries, live.seconds),
        commitsPerSecond: rate(live.commits, live.commitSeconds),
        p50Ms: percentile(live.latencies, 50),
        p99Ms: percentile(live.latencies, 99),
        maxMs: live.latencies.at(-1) ?? 0,
        errors: errors.live,
      },
      duplicates: receiver.duplicates(),
      ...(firstError === undefined ? {} : { firstError }),
    };
  } finally {
    // Undelivered outbox rows go with their subscriptions, so nothing is sent after this.
    for (const id of ids)
      await q.delete("/subscriptions/:id", { params: { id } }).catch((err: unknown) => {
        progress(`webhooks: could not delete subscription ${id}: ${String(err)}`);
      });
    await receiver.close();
  }
}

async function main(): Promise<void> {
  progress("webhooks: starting quire");
  const server = await startQuire();
  const stop = () => void server.stop().finally(() => process.exit(130));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const q = quireClient(server.url);
    const org = `hooks${Date.now().toString(36)}`;
    await q.post("/orgs", { body: { name: org } });
    await q.post("/repos", { body: { owner: org, name: `${org}/docs` } });
    const result = await measureWebhooks(server, q, `${org}/docs`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await server.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
