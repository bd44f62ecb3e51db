import { createHash } from "node:crypto";
import type { CloudTasksClient } from "@google-cloud/tasks";
import type pg from "pg";
import type { DatabaseTarget } from "../db/target.ts";
import { WakeLoop } from "../events/wake.ts";
import { retryingOnce } from "../lazy.ts";
import { type AttemptDeps, attemptRow, recordRow } from "./attempt.ts";
import {
  claimForTask,
  cleanupEvery,
  deleteDelivered,
  type LeasedRow,
  type Reservation,
  reserveForTasks,
  unreserve,
} from "./outbox.ts";
import type { AttemptOutcome } from "./send.ts";
import { TASK_HANDLED_SYSTEMS } from "./system.ts";

/** One task: call the delivery function with `body` at `scheduleAt`. */
export interface TaskRequest {
  /** The task id inside the queue; the same id twice makes one task. */
  id: string;
  scheduleAt: Date;
  body: Buffer;
  /** Where the task goes, when not to the delivery function (a system subscription's own). */
  targetUrl?: string | undefined;
}

/** The part of a task queue that webhook delivery uses. */
export interface TaskQueue {
  /** Creates the task; `exists` when a task of that id was already created (an idempotent retry). */
  enqueue(task: TaskRequest): Promise<"created" | "exists">;
  close(): Promise<void>;
}

export interface CloudTasksSettings {
  /** `projects/P/locations/L/queues/Q`. */
  queue: string;
  /** The delivery function's URL: each task POSTs `{outbox_id, lease}` to it. */
  targetUrl: string;
  /** When set, tasks carry an OIDC token of this service account (audience: the target URL). */
  serviceAccount?: string | undefined;
  /** `host:port` of a Cloud Tasks emulator: plain gRPC, no credentials. */
  emulatorHost?: string | undefined;
}

const ALREADY_EXISTS = 6;

/**
 * A Cloud Tasks client, or one for the emulator at `host:port` (insecure channel, no credentials).
 * The library (and gRPC) is imported here, at the first task, not when the process starts: most
 * instances never enqueue one, and importing it costs a large part of a cold start.
 */
export async function cloudTasksClient(emulatorHost?: string): Promise<CloudTasksClient> {
  const { CloudTasksClient } = await import("@google-cloud/tasks");
  if (!emulatorHost) return new CloudTasksClient();
  const { credentials } = await import("@grpc/grpc-js");
  const at = emulatorHost.lastIndexOf(":");
  return new CloudTasksClient({
    servicePath: emulatorHost.slice(0, at).replace(/^\[|\]$/g, ""),
    port: Number(emulatorHost.slice(at + 1)),
    sslCreds: credentials.createInsecure(),
    projectId: "emulator",
    // Given, so the client does not look for credentials (nor ask a metadata server) to learn it.
    universeDomain: "googleapis.com",
  });
}

/** The Cloud Tasks queue of webhook attempts; its client is made at the first task unless given. */
export function cloudTasksQueue(settings: CloudTasksSettings, given?: CloudTasksClient): TaskQueue {
  let made: CloudTasksClient | undefined;
  const client = given
    ? async () => given
    : retryingOnce(async () => {
        made = await cloudTasksClient(settings.emulatorHost);
        return made;
      });
  return {
    async enqueue(task) {
      const ms = task.scheduleAt.getTime();
      const url = task.targetUrl ?? settings.targetUrl;
      try {
        await (await client()).createTask({
          parent: settings.queue,
          task: {
            name: `${settings.queue}/tasks/${task.id}`,
            scheduleTime: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 },
            // The function answers within one attempt's timeout plus two database writes.
            dispatchDeadline: { seconds: 60 },
            httpRequest: {
              httpMethod: "POST",
              url,
              headers: { "content-type": "application/json" },
              body: task.body,
              ...(settings.serviceAccount
                ? { oidcToken: { serviceAccountEmail: settings.serviceAccount, audience: url } }
                : {}),
            },
          },
        });
        return "created";
      } catch (err) {
        if ((err as { code?: number }).code === ALREADY_EXISTS) return "exists";
        throw err;
      }
    },
    async close() {
      await (given ?? made)?.close();
    },
  };
}

/**
 * The task id of one reservation: outbox id and lease number, behind a short hash so that ids are
 * spread over the queue's key space (Cloud Tasks advises against sequential task names).
 */
export function taskId(r: { id: number; lease: number }): string {
  const hash = createHash("sha256").update(`${r.id}:${r.lease}`).digest("hex").slice(0, 8);
  return `w${hash}-${r.id}-${r.lease}`;
}

/** A system subscription's rows handled in the function a task reaches, instead of sent. */
export interface TaskHandler {
  /** The system subscription (one of TASK_HANDLED_SYSTEMS). */
  system: string;
  /** How long a claimed row is the handler's before another task may take it over. */
  leaseSeconds: number;
  /** The function's own pool, on which the row is claimed and recorded. */
  pool: pg.Pool;
  /** Handles one row's event; a failure is retried after the backoff, as a failed send is. */
  handle(row: LeasedRow): Promise<AttemptOutcome>;
}

/** One claimed row handled in process and its outcome recorded under its lease. */
async function handledRow(deps: AttemptDeps, row: LeasedRow, handler: TaskHandler) {
  const outcome = await handler.handle(row);
  return { outcome, recorded: await recordRow(deps, row, outcome) };
}

/** How long a reserved row waits for its task, past the scheduled time, before a new task is made. */
const RESERVATION_GRACE_SECONDS = 120;
/** Rows one pump pass reserves; a full pass means more may be waiting. */
export const TASK_BATCH = 100;

/**
 * Webhook delivery through Cloud Tasks: one task per attempt.
 *
 * The pump reserves rows that have no task yet (new events, resumed subscriptions, or a task that
 * never came) and creates one task each, named after the row and its lease, scheduled at the row's
 * next_attempt_at. The task calls the delivery function, which claims the attempt (`deliver`),
 * makes it exactly as the local worker does, and on failure reserves the row again and creates the
 * task of its next attempt, scheduled after the backoff. A task that runs twice, or late, finds
 * its lease gone and does nothing.
 */
export class CloudTasksWebhookDelivery {
  private loop: WakeLoop | undefined;
  private cleanupTimer: NodeJS.Timeout | undefined;
  private readonly deps: AttemptDeps & { databaseUrl: DatabaseTarget };
  private readonly tasks: TaskQueue;
  private readonly tuning: { pollMs: number; cleanupMs: number };

  constructor(
    deps: AttemptDeps & { databaseUrl: DatabaseTarget },
    tasks: TaskQueue,
    tuning = { pollMs: 1000, cleanupMs: 60_000 },
  ) {
    this.deps = deps;
    this.tasks = tasks;
    this.tuning = tuning;
  }

  /** Runs the pump on commits (LISTEN) and every `pollMs`, in a long-lived process. */
  async start(): Promise<void> {
    this.loop = new WakeLoop({
      databaseUrl: this.deps.databaseUrl,
      name: "quire-webhook-tasks",
      log: this.deps.log,
      sweepMs: this.tuning.pollMs,
      step: async () => ((await this.runOnce()) >= TASK_BATCH ? "more" : "idle"),
    });
    await this.loop.start();
    this.cleanupTimer = cleanupEvery(this.tuning.cleanupMs, () => this.cleanup(), this.deps.log);
  }

  wake(): void {
    this.loop?.wake();
  }

  private async enqueue(reservations: Reservation[], pool: pg.Pool = this.deps.pool): Promise<number> {
    let created = 0;
    await Promise.all(
      reservations.map(async (r) => {
        const body = Buffer.from(JSON.stringify({ outbox_id: r.id, lease: r.lease }));
        // A system subscription handled by a function of its own: the task goes straight there.
        const targetUrl = r.system !== null && TASK_HANDLED_SYSTEMS.has(r.system) ? r.url : undefined;
        try {
          await this.tasks.enqueue({ id: taskId(r), scheduleAt: r.scheduleAt, body, targetUrl });
          created++;
        } catch (err) {
          this.deps.log.warn(
            { err, outbox_id: r.id },
            "could not create the webhook task; the next pump retries",
          );
          await unreserve(pool, r).catch(() => {});
        }
      }),
    );
    return created;
  }

  /**
   * One pump pass: creates a task for every row that needs one; returns how many rows it reserved.
   * `pool` is the deliverers' own by default; a function's after-commit pass passes the API's, so
   * an instance that delivers nothing never opens the deliverers' connections (the connection
   * budget, docs/deploy.md, counts them only for webhookDelivery).
   */
  async runOnce(pool: pg.Pool = this.deps.pool): Promise<number> {
    const reserved = await reserveForTasks(pool, {
      now: this.deps.clock.now(),
      batch: TASK_BATCH,
      graceSeconds: RESERVATION_GRACE_SECONDS,
    });
    await this.enqueue(reserved, pool);
    return reserved.length;
  }

  /** Pump passes until no row is left without a task. */
  async drain(): Promise<void> {
    while ((await this.runOnce()) > 0) {}
  }

  /**
   * The delivery function's work for one task: claim the attempt under the task's lease, make it,
   * and after a failure schedule the next attempt's task. A stale or duplicate task does nothing.
   * With `handler`, the task is one of a system subscription handled in this function
   * (TASK_HANDLED_SYSTEMS): its rows are claimed the same way, then handled instead of sent; a row
   * of any other subscription is stale here, as a handled row is to the webhook sender.
   */
  async deliver(
    task: { outbox_id: number; lease: number },
    handler?: TaskHandler,
  ): Promise<"delivered" | "failed" | "stale"> {
    // A handler's rows are claimed and recorded on its function's own pool: the deliverers' pool
    // is opened only by webhookDelivery (the connection budget, docs/deploy.md).
    const deps = handler ? { ...this.deps, pool: handler.pool } : this.deps;
    const row = await claimForTask(deps.pool, {
      id: task.outbox_id,
      lease: task.lease,
      now: this.deps.clock.now(),
      leaseSeconds: handler ? handler.leaseSeconds : this.deps.send.timeoutMs / 1000 + 5,
      admins: this.deps.admins,
      handles: handler?.system ?? null,
      handledElsewhere: [...TASK_HANDLED_SYSTEMS],
    });
    if (!row) return "stale";
    const result = handler ? await handledRow(deps, row, handler) : await attemptRow(deps, row);
    if (result.outcome.ok) return "delivered";
    if (result.recorded.recorded && !result.recorded.suspended) {
      const next = await reserveForTasks(deps.pool, {
        now: this.deps.clock.now(),
        batch: 1,
        graceSeconds: RESERVATION_GRACE_SECONDS,
        only: row.id,
      });
      await this.enqueue(next, deps.pool);
    }
    return "failed";
  }

  cleanup(): Promise<number> {
    return deleteDelivered(this.deps.pool, this.deps.clock.now());
  }

  async close(): Promise<void> {
    clearInterval(this.cleanupTimer);
    await this.loop?.close();
    await this.tasks.close();
  }
}
