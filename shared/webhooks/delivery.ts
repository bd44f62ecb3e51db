import http from "node:http";
import https from "node:https";
import pg from "pg";
import type { Clock } from "../clock.ts";
import { type Env, globalAdminsOf, requiredSetting } from "../config.ts";
import { clientConfig, type DatabaseTarget } from "../db/target.ts";
import { fail } from "../errors.ts";
import { EVENTS_CHANNEL, onEventsCommitted } from "../events/notify.ts";
import type { Logger } from "../log.ts";
import type { AttemptDeps } from "./attempt.ts";
import {
  CloudTasksWebhookDelivery,
  cloudTasksQueue,
  TASK_BATCH,
  type TaskHandler,
  type TaskQueue,
} from "./cloudtasks.ts";
import { parseWebhookUrl, type Resolver, systemResolver, vetTarget, WebhookUrlError } from "./guard.ts";
import { ATTEMPT_TIMEOUT_MS } from "./send.ts";
import { defaultTuning, PostgresWebhookWorker, type WorkerTuning } from "./worker.ts";

/** Seams for tests and benchmarks; production uses none of them. */
export interface WebhookOptions {
  /** Per-attempt timeout (the spec's 10 s by default); tests shorten it instead of waiting. */
  timeoutMs?: number;
  /** Host name resolution, at creation and at send time (the system resolver by default). */
  resolve?: Resolver;
  /** Tuning of the local worker (poll interval, batch sizes). */
  tuning?: Partial<WorkerTuning>;
  /** Cloud Tasks mode: another task queue than the configured one. */
  taskQueue?: TaskQueue;
}

/**
 * Webhook delivery as the rest of Quire sees it: the SSRF check at subscription creation, the
 * deliverer of this process (a local queue worker, or the Cloud Tasks pump), and hooks for tests.
 */
export interface WebhookDelivery {
  readonly mode: "postgres" | "cloudtasks";
  /** Refuses (WEBHOOK_URL_INVALID / WEBHOOK_URL_REFUSED) a URL that webhooks may not be sent to. */
  vetUrl(url: string): Promise<void>;
  /** Starts delivering in the background (the local server calls it). */
  start(): Promise<void>;
  /** Wakes deliverers on every instance (after a resume): held rows go out at once. */
  wake(): Promise<void>;
  /** One pass: leases (or, with Cloud Tasks, enqueues) what is due by the clock; returns how many rows. */
  runOnce(): Promise<number>;
  /** Passes until nothing is due and nothing is in flight. */
  drain(): Promise<void>;
  /** Deletes delivered rows older than 7 days (by the clock); returns how many. */
  cleanup(): Promise<number>;
  /**
   * Waits for the webhook tasks of this instance's commits so far to be created (Cloud Tasks mode,
   * in a function; at most SETTLE_MS). A function calls it before it answers: once the response is
   * sent the platform may take the instance's CPU away, and the tasks would wait for the sweep.
   */
  settle(): Promise<void>;
  /**
   * Cloud Tasks mode: the delivery function's work for one task; with `handler`, the work of the
   * function that handles a system subscription's rows itself (docs/events.md, "Cloud delivery").
   */
  deliverTask(
    task: { outbox_id: number; lease: number },
    handler?: TaskHandler,
  ): Promise<"delivered" | "failed" | "stale">;
  close(): Promise<void>;
}

interface Deps {
  config: Env;
  log: Logger;
  pool: pg.Pool;
  clock: Clock;
  databaseUrl: DatabaseTarget;
}

/** Builds this process's webhook delivery from configuration (SVC_WEBHOOK_DELIVERY). */
export function createWebhookDelivery(deps: Deps, opts: WebhookOptions = {}): WebhookDelivery {
  const allowPrivate = deps.config.SVC_WEBHOOK_ALLOW_PRIVATE;
  const resolve = opts.resolve ?? systemResolver;
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };
  // The deliverers' own connections: delivery never takes the API's, and commits without waiting
  // for a WAL flush (see AttemptDeps.pool).
  const pool = new pg.Pool({
    ...clientConfig(deps.databaseUrl),
    max: 8,
    idleTimeoutMillis: 30_000,
    options: "-c synchronous_commit=off",
    application_name: "quire-webhooks",
  });
  pool.on("error", () => {}); // an idle connection losing its server must not crash the process
  const attemptDeps: AttemptDeps & { databaseUrl: DatabaseTarget } = {
    pool,
    clock: deps.clock,
    log: deps.log.child({ component: "webhooks" }),
    databaseUrl: deps.databaseUrl,
    send: { allowPrivate, resolve, timeoutMs: opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS, agents },
    admins: globalAdminsOf(deps.config),
  };
  const cloud =
    deps.config.SVC_WEBHOOK_DELIVERY === "cloudtasks"
      ? new CloudTasksWebhookDelivery(
          attemptDeps,
          opts.taskQueue ??
            cloudTasksQueue({
              queue: requiredSetting(deps.config, "SVC_WEBHOOK_TASKS_QUEUE"),
              targetUrl: requiredSetting(deps.config, "SVC_WEBHOOK_TASKS_TARGET_URL"),
              serviceAccount: deps.config.SVC_WEBHOOK_TASKS_SERVICE_ACCOUNT,
              emulatorHost: deps.config.CLOUD_TASKS_EMULATOR_HOST,
            }),
          { pollMs: opts.tuning?.pollMs ?? defaultTuning.pollMs, cleanupMs: defaultTuning.cleanupMs },
        )
      : undefined;
  const deliverer = cloud ?? new PostgresWebhookWorker(attemptDeps, { ...defaultTuning, ...opts.tuning });
  let started = false;
  // A function instance runs no pump (start() is never called there): each commit that records
  // events creates its tasks at once, so the first attempt does not wait for the minute's sweep.
  // Reserving a row takes its lease, so two instances never create a task for the same attempt.
  // It runs on the API's pool, so the deliverers' pool stays unopened outside webhookDelivery.
  const afterCommit = cloud
    ? passesOnDemand(() => cloud.runOnce(deps.pool), TASK_BATCH, attemptDeps.log)
    : undefined;
  const unlisten = afterCommit
    ? onEventsCommitted(deps.pool, () => {
        if (!started) afterCommit.kick();
      })
    : undefined;

  return {
    mode: deps.config.SVC_WEBHOOK_DELIVERY,
    async vetUrl(url) {
      try {
        await vetTarget(parseWebhookUrl(url), { allowPrivate, resolve });
      } catch (err) {
        if (!(err instanceof WebhookUrlError)) throw err;
        fail(
          err.kind === "invalid" ? "WEBHOOK_URL_INVALID" : "WEBHOOK_URL_REFUSED",
          `config.url: ${err.message}`,
        );
      }
    },
    async start() {
      if (started) return;
      started = true;
      await deliverer.start();
    },
    async wake() {
      // Every instance's deliverer listens on the events channel, this one's included.
      await deps.pool.query("SELECT pg_notify($1, '')", [EVENTS_CHANNEL]).catch(() => {});
      deliverer.wake();
      // A function instance has no pump running: create the tasks now (the sweep would, later).
      if (cloud && !started)
        await cloud.runOnce(deps.pool).catch((err) => attemptDeps.log.warn({ err }, "webhook pump failed"));
    },
    settle: async () => afterCommit?.settle(SETTLE_MS),
    runOnce: () => deliverer.runOnce(),
    drain: () => deliverer.drain(),
    cleanup: () => deliverer.cleanup(),
    async deliverTask(task, handler) {
      if (!cloud) fail("NOT_FOUND", "webhooks are delivered in-process here (SVC_WEBHOOK_DELIVERY=postgres)");
      return cloud.deliver(task, handler);
    },
    async close() {
      unlisten?.();
      await afterCommit?.settle(SETTLE_MS);
      await deliverer.close();
      await pool.end();
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** The most a function's response waits for its commit's tasks; the sweep creates any left over. */
const SETTLE_MS = 5_000;

/**
 * Runs `pass` when kicked, one at a time: a kick during a pass runs one more pass after it (the
 * running one may have looked before the kicking commit), however many kicks came meanwhile.
 */
function passesOnDemand(pass: () => Promise<number>, batch: number, log: Logger) {
  let running: Promise<void> | undefined;
  let again = false;
  const loop = async () => {
    do {
      again = false;
      try {
        if ((await pass()) >= batch) again = true;
      } catch (err) {
        log.warn({ err }, "could not create webhook tasks after a commit; the sweep will");
      }
    } while (again);
  };
  return {
    kick(): void {
      if (running) {
        again = true;
        return;
      }
      running = loop().finally(() => {
        running = undefined;
      });
    },
    async settle(ms: number): Promise<void> {
      if (!running) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
        timer.unref();
      });
      await Promise.race([running, late]);
      clearTimeout(timer);
    },
  };
}
