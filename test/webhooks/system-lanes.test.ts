import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_LANES } from "../../shared/webhooks/queries.ts";
import { commit, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";
import { startWebhookApp, subscribe, type WebhookApp } from "./support.ts";

/**
 * A receiver that answers each delivery after `delayMs`, and per path records the event order and
 * the most deliveries it held at once.
 */
async function slowReceiver(delayMs: number) {
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const order = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const now = (inFlight.get(path) ?? 0) + 1;
      inFlight.set(path, now);
      peak.set(path, Math.max(peak.get(path) ?? 0, now));
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      order.set(path, [...(order.get(path) ?? []), body.data.sequence as number]);
      setTimeout(() => {
        inFlight.set(path, inFlight.get(path)! - 1);
        res.writeHead(200).end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    peak: (path: string) => peak.get(path) ?? 0,
    order: (path: string) => order.get(path) ?? [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let app: WebhookApp;
let fx: RepoFixture;
const rx = useFixture(() => slowReceiver(100));
beforeAll(async () => {
  // The scheduler's subscription goes to <RUNNER_URL>/webhook: here, the slow receiver.
  app = await startWebhookApp({ env: { RUNNER_URL: rx.base } });
  fx = await repoWithOwner(app as never);
});
afterAll(async () => {
  await app?.close();
});

describe("the system subscription's delivery lanes", () => {
  it("sends the CI scheduler's deliveries side by side, while a person's subscription still gets one at a time, in order", async () => {
    await subscribe(fx.client, {
      repo: fx.repo,
      url: `${rx.base}/user`,
      event_types: ["com.svc.commit.created"],
    });
    const sequences: number[] = [];
    for (let i = 0; i < 24; i++) sequences.push(await commit(fx, "main", { [`f${i}.md`]: `${i}\n` }));
    await app.webhooks.drain();
    expect(rx.order("/user")).toEqual(sequences);
    expect(rx.peak("/user")).toBe(1);
    expect([...rx.order("/webhook")].sort((a, b) => a - b)).toEqual(sequences);
    expect(rx.peak("/webhook")).toBeGreaterThan(1);
    expect(rx.peak("/webhook")).toBeLessThanOrEqual(SYSTEM_LANES);
  });
});
