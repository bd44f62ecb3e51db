import { randomUUID } from "node:crypto";
import { prepared } from "../db/pool.ts";
import type { Tx } from "../db/tx.ts";
import { wakeDeliverers } from "./notify.ts";

/** What every issue comment event says. */
type IssueCommentEvent = {
  repo: string;
  issue_id: string;
  number: number;
  comment_id: string;
  author: string;
};

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
  // Auto-merge (docs/auto-merge.md). `reason` says why it went off: `disabled` (a person turned it
  // off), `conflict` or `refused` (an attempt failed); `message` says it in words.
  "com.svc.branch.auto_merge.enabled": { repo: string; branch: string; enabled_by: string };
  "com.svc.branch.auto_merge.disabled": {
    repo: string;
    branch: string;
    reason: "disabled" | "conflict" | "refused";
    message: string;
    disabled_by: string;
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
  // Issues (docs/issues.md): who did what to which `#n`; titles and bodies stay in the issue.
  "com.svc.issue.opened": { repo: string; issue_id: string; number: number; author: string };
  "com.svc.issue.edited": {
    repo: string;
    issue_id: string;
    number: number;
    editor: string;
    fields: string[];
  };
  "com.svc.issue.closed": {
    repo: string;
    issue_id: string;
    number: number;
    closed_by: string;
    reason: string;
  };
  "com.svc.issue.reopened": { repo: string; issue_id: string; number: number; reopened_by: string };
  "com.svc.issue.linked": {
    repo: string;
    issue_id: string;
    number: number;
    ref_type: "commit" | "proposal";
    ref_id: string;
    linked_by: string;
  };
  "com.svc.issue_comment.created": IssueCommentEvent;
  "com.svc.issue_comment.edited": IssueCommentEvent;
  "com.svc.issue_comment.deleted": IssueCommentEvent & { deleted_by: string };
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
  // Repo secrets (docs/secrets.md): names and sizes, never a value.
  "com.svc.secret.set": { repo: string; name: string; size_bytes: number; created: boolean; set_by: string };
  "com.svc.secret.deleted": { repo: string; name: string; deleted_by: string };
  "com.svc.secret.accessed": {
    repo: string;
    name: string;
    job_id: string;
    check_name: string;
    branch: string;
    sequence: number;
  };
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

/**
 * The SQL that inserts an event and one outbox row for every subscription whose filters match it
 * (suspended ones too: their rows are held until resume), as two CTEs `event` and `outbox`, with
 * the event's values (see `eventValues`) as parameters from `$first` on. Part of the mutation's own
 * statement where it can be (a commit), else a statement of its own (recordEvent).
 */
export function eventCtes(first: number): string {
  const $ = (i: number) => `$${first + i}`;
  return `event AS (
    INSERT INTO events (id, type, source, repo, time, data)
    VALUES (${$(0)}::uuid, ${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}::timestamptz, ${$(5)}::jsonb)
    RETURNING id),
  outbox AS (
    INSERT INTO webhook_outbox (subscription_id, event_id)
    SELECT s.id, event.id FROM subscriptions s, event
    WHERE (s.repo IS NULL OR s.repo = ${$(3)}) AND (s.event_types IS NULL OR ${$(1)} = ANY (s.event_types)))`;
}

const event_insert_with_outbox = prepared("event_insert_with_outbox", `WITH ${eventCtes(1)} SELECT 1`);

/** The CloudEvents `source` of a repo's events, and of an org's. */
export const repoSource = (repo: string) => `/repos/${repo}`;
export const orgSource = (org: string) => `/orgs/${org}`;

/**
 * Records an event in the event log, with its webhook outbox rows. Call it with the mutation's
 * transaction, so the event exists exactly when the mutation does. Once the transaction commits,
 * its `afterCommit` hook wakes the deliverers (SSE fan-out, webhook worker), which read the log
 * and the outbox.
 */
export async function recordEvent<T extends EventType>(
  tx: Tx,
  type: T,
  data: EventPayloads[T],
  scope: { repo: string } | { org: string },
): Promise<CloudEvent> {
  const event = cloudEvent(type, data, scope);
  await tx.query(event_insert_with_outbox(eventValues(event, scope)));
  tx.afterCommit(wakeDeliverers);
  return event;
}

/** A new CloudEvent (id, time) for a mutation. */
export function cloudEvent<T extends EventType>(
  type: T,
  data: EventPayloads[T],
  scope: { repo: string } | { org: string },
): CloudEvent {
  return {
    specversion: "1.0",
    type,
    source: "repo" in scope ? repoSource(scope.repo) : orgSource(scope.org),
    id: randomUUID(),
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    data,
  };
}

/** The parameters of `eventCtes`: id, type, source, repo, time, data. */
export function eventValues(event: CloudEvent, scope: { repo: string } | { org: string }): unknown[] {
  return [
    event.id,
    event.type,
    event.source,
    "repo" in scope ? scope.repo : null,
    event.time,
    JSON.stringify(event.data),
  ];
}
