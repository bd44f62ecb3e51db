import { createHash } from "node:crypto";
import type { CloudTasksClient } from "@google-cloud/tasks";
import type pg from "pg";
import type { DatabaseTarget } from "../db/target.ts";
import { WakeLoop } from "../events/wake.ts";
import { retryingOnce } from "../lazy.ts";
import { type AttemptDeps, attemptRow } from "./attempt.ts";
import {
  claimForTask,
  cleanupEvery,
  deleteDelivered,
  type Reservation,
  reserveForTasks,
  unreserve,
} from "./outbox.ts";

/** One task: call the delivery function with `body` at `scheduleAt`. */
export interface TaskRequest {
  /** The task id inside the queue; the same id twice makes one task. */
  id: string;
  scheduleAt: Date;
  body: Buffer;
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
              url: settings.targetUrl,
              headers: { "content-type": "application/json" },
              body: task.body,
              ...(settings.serviceAccount
                ? {
                    oidcToken: { serviceAccountEmail: settings.serviceAccount, audience: settings.targetUrl },
                  }
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
        try {
          await this.tasks.enqueue({ id: taskId(r), scheduleAt: r.scheduleAt, body });
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
   */
  async deliver(task: { outbox_id: number; lease: number }): Promise<"delivered" | "failed" | "stale"> {
    const row = await claimForTask(this.deps.pool, {
      id: task.outbox_id,
      lease: task.lease,
      now: this.deps.clock.now(),
      leaseSeconds: this.deps.send.timeoutMs / 1000 + 5,
      admins: this.deps.admins,
    });
    if (!row) return "stale";
    const result = await attemptRow(this.deps, row);
    if (result.outcome.ok) return "delivered";
    if (result.recorded.recorded && !result.recorded.suspended) {
      const next = await reserveForTasks(this.deps.pool, {
        now: this.deps.clock.now(),
        batch: 1,
        graceSeconds: RESERVATION_GRACE_SECONDS,
        only: row.id,
      });
      await this.enqueue(next);
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
