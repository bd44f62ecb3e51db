import type { EventType } from "./record.ts";

/** Every event type Quire emits, at run time (the keys of `EventPayloads`). */
export const eventTypes = [
  "com.svc.repo.created",
  "com.svc.repo.deleted",
  "com.svc.commit.created",
  "com.svc.branch.created",
  "com.svc.branch.merged",
  "com.svc.branch.rebased",
  "com.svc.branch.abandoned",
  "com.svc.check.reported",
  "com.svc.branch.auto_merge.enabled",
  "com.svc.branch.auto_merge.disabled",
  "com.svc.merge.blocked",
  "com.svc.proposal.opened",
  "com.svc.proposal.closed",
  "com.svc.proposal.merged",
  "com.svc.issue.opened",
  "com.svc.issue.edited",
  "com.svc.issue.closed",
  "com.svc.issue.reopened",
  "com.svc.issue.linked",
  "com.svc.issue_comment.created",
  "com.svc.issue_comment.edited",
  "com.svc.issue_comment.deleted",
  "com.svc.review.submitted",
  "com.svc.org.created",
  "com.svc.org.deleted",
  "com.svc.role.changed",
  "com.svc.secret.set",
  "com.svc.secret.deleted",
  "com.svc.secret.accessed",
] as const satisfies readonly EventType[];

// Fails to compile when EventPayloads gains a type this list lacks.
type Missing = Exclude<EventType, (typeof eventTypes)[number]>;
const complete: [Missing] extends [never] ? true : Missing = true;
void complete;

const known = new Set<string>(eventTypes);
export const isEventType = (t: string): t is EventType => known.has(t);
