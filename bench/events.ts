import type { QuireClient } from "./client.ts";
import { createRepo } from "./fixtures.ts";
import { progress } from "./log.ts";
import type { phaseRunner } from "./phases.ts";
import type { Plan } from "./plan.ts";
import { measureSse, type SseBenchResult } from "./scenarios/sse.ts";
import { measureWebhooks, type WebhookBenchResult } from "./scenarios/webhooks.ts";
import { type QuireProcess, startQuire } from "./server.ts";

/** The third table's figures: webhook delivery, then SSE latency over two instances. */
export interface EventsResults {
  webhooks: WebhookBenchResult & { repo: string };
  sse: SseBenchResult & { repo: string };
}

/**
 * Runs after the review-and-merge phases, each on a repo of its own that nothing else commits to.
 * Webhooks first, on the harness's server alone (as the standalone script runs them); then SSE,
 * with a second Quire process started on the same database and blob dir, which is stopped before
 * this returns or throws (and by run.ts's stopEveryQuire on a signal or crash). While it runs,
 * its CPU counts as the server's in the phase figures.
 */
export async function measureEvents(
  server: QuireProcess,
  q: QuireClient,
  phases: ReturnType<typeof phaseRunner>,
  plan: Plan,
): Promise<EventsResults> {
  const hooksRepo = await createRepo(q, "events-webhooks");
  const webhooks = await measureWebhooks(server, q, hooksRepo, plan.webhooks, phases.run);
  const sseRepo = await createRepo(q, "events-sse");
  progress("sse: starting a second quire on the same database");
  const second = await startQuire({ sharing: server, name: "quire-2" });
  const forget = phases.alsoSample(second);
  try {
    const sse = await measureSse([server.url, second.url], sseRepo, plan.sse, phases.run);
    return { webhooks: { ...webhooks, repo: hooksRepo }, sse: { ...sse, repo: sseRepo } };
  } finally {
    forget();
    await second.stop();
  }
}
