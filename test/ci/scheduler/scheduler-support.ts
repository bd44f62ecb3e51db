import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { envelopeBody, signature } from "../../../shared/webhooks/send.ts";
import type { TestApp } from "../../support/app.ts";
import type { Res } from "../../support/client.ts";

/**
 * What the scheduler's behaviour tests share: the jobs of a repo as stored, waiting until every
 * event that can queue CI has been delivered to the scheduler and acknowledged (so "no job" is
 * an answer, not a race), and signed deliveries made by hand with the subscription's secret.
 */

/** The event types the scheduler's subscription carries. */
export const CI_EVENTS = ["com.svc.commit.created", "com.svc.proposal.opened"];

/** A job as stored, with the fields the trigger mapping decides. */
export interface StoredJob {
  id: string;
  trigger_type: string;
  trigger_branch: string;
  trigger_base_branch: string | null;
  trigger_proposal_id: string | null;
  sequence: number;
  status: string;
  checks: string[];
  created_by: string;
  attempt: number;
  error: string | null;
}

/** Every job of `repo`, by sequence, then trigger type. */
export function jobsOf(app: TestApp, repo: string): Promise<StoredJob[]> {
  return app.sql<StoredJob>(
    `SELECT j.id::text, j.trigger_type, j.trigger_branch, j.trigger_base_branch,
            j.trigger_proposal_id::text, j.sequence::int AS sequence, j.status, j.checks, j.created_by,
            j.attempt, j.error
     FROM ci_jobs j JOIN repos r ON r.id = j.repo_id
     WHERE r.name = $1 ORDER BY j.sequence, j.trigger_type, j.created_at`,
    [repo],
  );
}

/** One job by id, as stored. */
export async function storedJob(
  app: TestApp,
  id: string,
): Promise<StoredJob & { token_hash: Buffer | null }> {
  const [row] = await app.sql<StoredJob & { token_hash: Buffer | null }>(
    `SELECT id::text, trigger_type, trigger_branch, trigger_base_branch, trigger_proposal_id::text,
            sequence::int AS sequence, status, checks, created_by, attempt, error,
            request_token_sha256 AS token_hash
     FROM ci_jobs WHERE id = $1`,
    [id],
  );
  expect(row, `job ${id}`).toBeDefined();
  return row!;
}

// CI events of the repo that the scheduler has not yet acknowledged with a 2xx answer.
const unacknowledged = `
  SELECT e.type, e.data, o.attempts, o.last_status, o.last_error
  FROM events e
  LEFT JOIN (webhook_outbox o JOIN subscriptions s ON s.id = o.subscription_id AND s.system_name = 'ci-scheduler')
    ON o.event_id = e.id
  WHERE e.repo = $1 AND e.type = ANY ($2::text[])
    AND NOT EXISTS (
      SELECT 1 FROM webhook_outbox d JOIN subscriptions ds ON ds.id = d.subscription_id
      WHERE d.event_id = e.id AND ds.system_name = 'ci-scheduler'
        AND d.delivered_at IS NOT NULL AND d.last_status BETWEEN 200 AND 299)`;

/**
 * Waits until every commit.created and proposal.opened event of `repo` has reached `/webhook`
 * through the real subscription and been answered 2xx: after this, whatever those deliveries
 * were going to queue is queued, and anything missing was not queued.
 */
export async function settle(app: TestApp, repo: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const pending = await app.sql(unacknowledged, [repo, CI_EVENTS]);
    if (pending.length === 0) return;
    if (Date.now() > until)
      expect(pending, `events of ${repo} not acknowledged by the scheduler within ${ms} ms`).toEqual([]);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The scheduler's subscription rows (there must be at most one). */
export function runnerSubscriptions(app: TestApp) {
  return app.sql<{
    id: string;
    repo: string | null;
    event_types: string[];
    url: string;
    secret: string | null;
    created_by: string;
    backend: string;
  }>(
    `SELECT id::text, repo, event_types, url, secret, created_by, backend
     FROM subscriptions WHERE system_name = 'ci-scheduler'`,
  );
}

/** The secret the scheduler's subscription signs with. */
export async function runnerSecret(app: TestApp): Promise<string> {
  const [sub] = await runnerSubscriptions(app);
  expect(sub?.secret, "the ci-scheduler subscription's secret").toBeTruthy();
  return sub!.secret!;
}

/** The exact envelope bytes the outbox sends for one stored event. */
export async function storedEnvelope(app: TestApp, eventId: string): Promise<Buffer> {
  const [row] = await app.sql<{
    id: string;
    type: string;
    source: string;
    time: Date;
    data: Record<string, unknown>;
  }>("SELECT id::text, type, source, time, data FROM events WHERE id = $1", [eventId]);
  expect(row, `event ${eventId}`).toBeDefined();
  return envelopeBody(row!);
}

/** The id of the one event of `repo` of `type` whose data has the given fields. */
export async function eventId(
  app: TestApp,
  repo: string,
  type: string,
  data: Record<string, string | number>,
): Promise<string> {
  const rows = await app.sql<{ id: string }>(
    "SELECT id::text FROM events WHERE repo = $1 AND type = $2 AND data @> $3::jsonb ORDER BY position",
    [repo, type, JSON.stringify(data)],
  );
  expect(rows, `${type} events of ${repo} with ${JSON.stringify(data)}`).toHaveLength(1);
  return rows[0]!.id;
}

/** A CloudEvent envelope made by hand (a fresh id unless given), as the outbox would send it. */
export function envelope(type: string, data: Record<string, unknown>, id: string = randomUUID()): Buffer {
  return Buffer.from(
    JSON.stringify({
      specversion: "1.0",
      type,
      source: typeof data["repo"] === "string" ? `/repos/${data["repo"]}` : "/",
      id,
      time: new Date().toISOString(),
      datacontenttype: "application/json",
      data,
    }),
  );
}

/**
 * POSTs `body` to the scheduler's `/webhook`, signed with the subscription's secret unless
 * `sig` says otherwise (null: no X-Svc-Signature header at all).
 */
export async function deliver(app: TestApp, body: Buffer, sig?: string | null): Promise<Res> {
  const value = sig === undefined ? signature(await runnerSecret(app), body) : sig;
  const headers: Record<string, string> = { "content-type": "application/cloudevents+json" };
  if (value !== null) headers["x-svc-signature"] = value;
  return app.anonymous.raw("POST", "/webhook", { body, headers });
}

export { startSecondInstance } from "../../support/app.ts";
