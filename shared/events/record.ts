import { randomUUID } from "node:crypto";
import type { Queryable } from "../db/pool.ts";

/** Every event type Quire emits, with its payload fields (spec "Event types and payload fields"). */
export interface EventPayloads {
  "com.svc.repo.created": { repo: string; owner: string; created_by: string };
  "com.svc.repo.deleted": { repo: string; deleted_by: string };
  "com.svc.commit.created": {
    repo: string;
    branch: string;
    sequence: number;
    author: string;
    message: string;
    file_count: number;
  };
  "com.svc.branch.created": { repo: string; branch: string; base_sequence: number; created_by: string };
  "com.svc.branch.abandoned": { repo: string; branch: string; abandoned_by: string };
  "com.svc.branch.merged": { repo: string; branch: string; sequence: number; merged_by: string };
  "com.svc.branch.rebased": {
    repo: string;
    branch: string;
    new_base_sequence: number;
    new_head_sequence: number;
    commits_replayed: number;
    rebased_by: string;
  };
  "com.svc.check.reported": {
    repo: string;
    branch: string;
    sequence: number;
    check_name: string;
    status: string;
    reporter: string;
  };
  "com.svc.merge.blocked": { repo: string; branch: string; actor: string; policies: string[] };
  "com.svc.proposal.opened": {
    repo: string;
    branch: string;
    base_branch: string;
    proposal_id: string;
    author: string;
    sequence: number;
  };
  "com.svc.proposal.closed": { repo: string; branch: string; proposal_id: string };
  "com.svc.proposal.merged": { repo: string; branch: string; base_branch: string; proposal_id: string };
  "com.svc.review.submitted": {
    repo: string;
    branch: string;
    sequence: number;
    reviewer: string;
    status: string;
  };
  "com.svc.org.created": { org: string; created_by: string };
  "com.svc.org.deleted": { org: string; deleted_by: string };
  "com.svc.role.changed": { repo: string; identity: string; role: string; changed_by: string };
}

export type EventType = keyof EventPayloads;

export interface CloudEvent {
  specversion: "1.0";
  type: string;
  source: string;
  id: string;
  time: string;
  datacontenttype: "application/json";
  data: Record<string, unknown>;
}

const event_insert = `
  INSERT INTO events (id, type, source, repo, time, data)
  VALUES ($1::uuid, $2, $3, $4, $5::timestamptz, $6::jsonb)`;

/** The CloudEvents `source` of a repo's events, and of an org's. */
export const repoSource = (repo: string) => `/repos/${repo}`;
export const orgSource = (org: string) => `/orgs/${org}`;

/**
 * Records an event in the event log. Call it with the mutation's transaction, so the event exists
 * exactly when the mutation does; delivery (SSE, webhooks) reads the log afterwards.
 */
export async function recordEvent<T extends EventType>(
  tx: Queryable,
  type: T,
  data: EventPayloads[T],
  scope: { repo: string } | { org: string },
): Promise<CloudEvent> {
  const event: CloudEvent = {
    specversion: "1.0",
    type,
    source: "repo" in scope ? repoSource(scope.repo) : orgSource(scope.org),
    id: randomUUID(),
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    data,
  };
  const repo = "repo" in scope ? scope.repo : null;
  await tx.query(event_insert, [event.id, event.type, event.source, repo, event.time, JSON.stringify(data)]);
  return event;
}
