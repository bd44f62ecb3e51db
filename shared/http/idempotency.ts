import { createHash, randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { Actor } from "../auth/actor.ts";
import type { JobRow } from "../ci/jobs/records.ts";
import type { WorkerIdentity } from "../ci/worker/index.ts";
import type { AppContext } from "../context.ts";
import { DomainError, fail } from "../errors.ts";
import { type HeldKey, runHolding } from "../idempotency/scope.ts";
import {
  releaseKey,
  type StoredAnswer,
  storeAnswer,
  sweepExpiredKeys,
  takeKey,
} from "../idempotency/store.ts";
import type { Reply } from "./route.ts";

/**
 * Safe retries (docs/api.md "Safe retries"): a mutation sent with an `Idempotency-Key` is done
 * once per key and caller; a retry with the same key and the same request gets the first answer.
 */

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
// 1 to 255 printable ASCII characters (space to tilde).
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
/** How often one process deletes expired keys, from the request path. */
const SWEEP_EVERY_MS = 60 * 1000;
/** What a caller told "in progress" should wait before it retries, in seconds. */
const RETRY_AFTER_S = "1";

/** Who a key belongs to: the authenticated principal of the request, if there is one. */
export function principalOf(caller: {
  actor?: Actor | null;
  job?: JobRow | undefined;
  worker?: WorkerIdentity | undefined;
}): string | undefined {
  // A job's tokens are per claim: a later claim of the job is a new principal.
  if (caller.actor?.job) return `${caller.actor.identity}#${caller.actor.job.attempt}`;
  if (caller.actor) return caller.actor.identity;
  if (caller.job) return `ci-request:${caller.job.id}#${caller.job.attempt}`;
  if (caller.worker) return `ci-worker:${caller.worker.worker}`;
  return undefined;
}

export interface KeyedRequest {
  method: string;
  /** Path and query string, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
  /** The principal (principalOf); a public route has none, and its key is ignored. */
  principal: string | undefined;
  /** Renders a refusal in the one error shape. */
  refuse: (err: DomainError) => Reply;
}

/** The request's key: undefined when absent or not a mutation; 400 when malformed. */
function keyOf(req: KeyedRequest): string | undefined {
  if (!MUTATIONS.has(req.method)) return undefined;
  const key = req.headers["idempotency-key"];
  if (key === undefined) return undefined;
  if (typeof key !== "string" || !KEY_FORMAT.test(key))
    fail("VALIDATION_FAILED", "the Idempotency-Key header must be 1 to 255 printable ASCII characters");
  return key;
}

/**
 * Runs `work` (the rest of the request: validation, access, handler) at most once per key. The key
 * is taken in its own short transaction; the work's transactions mark it applied before they
 * commit (shared/idempotency/scope.ts); the answer (2xx or 4xx) is stored after. A 5xx is not
 * stored: when nothing of the work committed the key is let go, so a retry does the work.
 */
export async function idempotently(
  ctx: AppContext,
  req: KeyedRequest,
  work: () => Promise<Reply>,
): Promise<Reply> {
  const key = keyOf(req);
  if (key === undefined || req.principal === undefined) return work();
  const now = ctx.clock.now();
  sweepSometimes(ctx, now);
  const taken = await takeKey(
    ctx.pool,
    {
      identity: req.principal,
      key,
      method: req.method,
      path: req.url,
      bodySha256: createHash("sha256")
        .update(req.body ?? Buffer.alloc(0))
        .digest(),
    },
    randomUUID(),
    now,
  );
  if ("lease" in taken) return holding(ctx, taken, req, work);
  switch (taken.kind) {
    case "complete":
      return replay(taken.answer);
    case "mismatch":
      return fail(
        "IDEMPOTENCY_KEY_REUSED",
        "this Idempotency-Key was used for a different request (method, path or body); use a new key",
      );
    case "in_progress":
      return inProgress(req.refuse);
    case "applied":
      return fail(
        "IDEMPOTENCY_ANSWER_LOST",
        "the request with this Idempotency-Key was done, but its answer was lost; read the current state instead of retrying",
      );
  }
}

async function holding(
  ctx: AppContext,
  key: HeldKey,
  req: KeyedRequest,
  work: () => Promise<Reply>,
): Promise<Reply> {
  let reply: Reply;
  try {
    reply = await runHolding(key, work);
  } catch (err) {
    if (err instanceof DomainError && err.status < 500) await keep(ctx, key, req.refuse(err));
    else await letGo(ctx, key);
    throw err;
  }
  if ("stream" in reply || reply.status >= 500) await letGo(ctx, key);
  else await keep(ctx, key, reply);
  return reply;
}

/** Stores the answer; a failure to store leaves the key applied or stale, never the work undone. */
async function keep(ctx: AppContext, key: HeldKey, reply: Reply & { body?: unknown }): Promise<void> {
  const { "x-request-id": _, ...headers } = reply.headers ?? {};
  const answer: StoredAnswer = {
    status: reply.status,
    headers,
    body: reply.body === undefined ? null : JSON.stringify(reply.body),
  };
  await storeAnswer(ctx.pool, key, answer).catch((err) =>
    ctx.log.error({ err, key: key.key }, "could not store the answer of an idempotent request"),
  );
}

async function letGo(ctx: AppContext, key: HeldKey): Promise<void> {
  await releaseKey(ctx.pool, key).catch((err) =>
    ctx.log.error({ err, key: key.key }, "could not release an idempotency key"),
  );
}

function replay(answer: StoredAnswer): Reply {
  const headers = { ...answer.headers, "idempotent-replayed": "true" };
  if (answer.body === null) return { status: answer.status, headers };
  return { status: answer.status, headers, body: JSON.parse(answer.body) };
}

function inProgress(refuse: (err: DomainError) => Reply): Reply {
  const reply = refuse(
    new DomainError(
      "IDEMPOTENCY_IN_PROGRESS",
      "a request with this Idempotency-Key is in progress; retry after it finishes",
    ),
  );
  return { ...reply, headers: { ...reply.headers, "retry-after": RETRY_AFTER_S } };
}

const lastSweep = new WeakMap<AppContext, number>();

/** Deletes expired keys at most once a minute per process, off the request's path. */
function sweepSometimes(ctx: AppContext, now: Date): void {
  const last = lastSweep.get(ctx);
  if (last !== undefined && now.getTime() - last < SWEEP_EVERY_MS) return;
  lastSweep.set(ctx, now.getTime());
  sweepExpiredKeys(ctx.pool, now).catch((err) =>
    ctx.log.warn({ err }, "could not delete expired idempotency keys"),
  );
}
