import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { migrate } from "../../shared/db/migrate.ts";
import { startTopology, TOPOLOGY_CLIENT_ID } from "../../test/deploy/topology.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";

/**
 * Commit to first webhook delivery in the deployed topology (test/deploy/topology.ts): the built
 * `repos`, `orgs` and `webhookDelivery` functions with terraform's environment, the Cloud Tasks
 * emulator calling the delivery function, and no sweep. The receiver stands where terraform's
 * runner_url points (the CI scheduler's /webhook by default), so it gets every commit's event as the
 * scheduler would. Each commit waits for its delivery before the next; the time is from sending
 * the commit request to the delivery's arrival.
 */

const COMMITS = 30;
/** Commit to first delivery, median (issue 18). */
const P50_TARGET_MS = 1000;
/** A delivery later than this is counted as lost (the sweep would take up to a minute). */
const TIMEOUT_MS = 20_000;

export async function measureCloudWebhooks(serverDatabaseUrl: string): Promise<string> {
  const databaseUrl = await freshDatabaseBeside(serverDatabaseUrl);
  const receiver = await startReceiver();
  progress("cloud-webhooks: npm run build and start repos, orgs, webhookDelivery, autoMerge");
  const top = await startTopology({
    databaseUrl,
    vars: { runner_url: receiver.url },
    // autoMerge too: each commit also makes the auto-merge subscription's task, as deployed.
    targets: ["repos", "orgs", "webhookDelivery", "autoMerge"],
  });
  try {
    const token = await top.idp.token("admin@quire.test", { audience: TOPOLOGY_CLIENT_ID });
    const call = async (path: string, body: unknown) => {
      const res = await fetch(`${top.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { sequence?: number };
    };
    await call("/orgs", { name: "bench" });
    await call("/repos", { owner: "bench", name: "hooks" });
    const latencies: number[] = [];
    let lost = 0;
    for (let i = 1; i <= COMMITS; i++) {
      const sent = performance.now();
      const { sequence } = await call("/repos/bench/hooks/-/commit", {
        branch: "main",
        message: `commit ${i}`,
        files: [{ path: `f${i}.md`, content: Buffer.from(`${i}\n`).toString("base64") }],
      });
      if (sequence === undefined) throw new Error("the commit answered no sequence");
      const at = await Promise.race([receiver.arrival(sequence), delay(TIMEOUT_MS)]);
      if (at === undefined) lost++;
      else latencies.push(at - sent);
    }
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    progress(`cloud-webhooks: p50 ${p50.toFixed(0)} ms over ${latencies.length} commits`);
    return [
      "| Scenario | Commits | p50 ms | p90 ms | max ms | Lost | Target | Met |",
      "|---|---:|---:|---:|---:|---:|---|---|",
      `| commit → first webhook delivery (Cloud Tasks emulator, no sweep) | ${COMMITS} | ${p50.toFixed(0)} | ${percentile(latencies, 90).toFixed(0)} | ${(latencies.at(-1) ?? 0).toFixed(0)} | ${lost} | p50 < ${P50_TARGET_MS} ms | ${p50 < P50_TARGET_MS && lost === 0 ? "yes" : "**no**"} |`,
    ].join("\n");
  } finally {
    await top.close();
    await new Promise((resolve) => receiver.server.close(resolve));
    await dropDatabase(serverDatabaseUrl, databaseUrl);
  }
}

const delay = (ms: number) =>
  new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref());

/** A runner that notes when each commit's event arrives, by the commit's sequence on main. */
async function startReceiver() {
  const arrivals = new Map<number, number>();
  const waiting = new Map<number, (at: number) => void>();
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(200).end();
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        type: string;
        data: { branch?: string; sequence?: number };
      };
      const sequence = event.data.sequence;
      if (event.type !== "com.svc.commit.created" || sequence === undefined || arrivals.has(sequence)) return;
      arrivals.set(sequence, at);
      waiting.get(sequence)?.(at);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** When the first delivery of commit `sequence` arrived (or will). */
    arrival: (sequence: number) =>
      new Promise<number>((resolve) => {
        const at = arrivals.get(sequence);
        if (at !== undefined) resolve(at);
        else waiting.set(sequence, resolve);
      }),
  };
}

/** A migrated database of its own on the bench server's cluster (its own webhook worker stays out). */
async function freshDatabaseBeside(serverUrl: string): Promise<string> {
  const name = `quire_cloud_webhooks_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return url.toString();
}

async function dropDatabase(serverUrl: string, url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
