import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { CloudTasksClient } from "@google-cloud/tasks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookDeliveryRoutes } from "../../functions/webhook-delivery/routes.ts";
import { nodeHandler, readBody } from "../../shared/http/node.ts";
import { cloudTasksQueue, type TaskRequest, taskId } from "../../shared/webhooks/cloudtasks.ts";
import {
  AUTO_MERGE_SYSTEM,
  deleteSystemSubscription,
  upsertSystemSubscription,
} from "../../shared/webhooks/system.ts";
import { commit, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";
import { startTasksEmulator } from "./cloud-tasks.ts";
import { outboxOf, startReceiver, startWebhookApp, subscribe, type WebhookApp } from "./support.ts";

/**
 * SVC_WEBHOOK_DELIVERY=cloudtasks against the Cloud Tasks emulator built from emulators/: the pump
 * creates one task per attempt, the emulator calls the delivery function over HTTP, and the
 * function makes the attempt with the same code as the local worker.
 */

let fn: http.Server;
let app: WebhookApp;
let fx: RepoFixture;
const calls: { status: number; body: unknown }[] = [];
/** Every task the app created, as it asked for it. */
const enqueued: TaskRequest[] = [];

/** Resolves once `check` holds, polling (this waits on the emulator's real I/O, not on the clock). */
async function until<T>(check: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(20);
  }
}

const emulator = useFixture(startTasksEmulator);
const rx = useFixture(startReceiver);
beforeAll(async () => {
  // The delivery function, as the functions framework would host it: Quire's own handler.
  let handler: ReturnType<typeof nodeHandler> | undefined;
  fn = http.createServer(async (req, res) => {
    const original = res.end.bind(res);
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (req.url === "/webhook-delivery")
        calls.push({ status: res.statusCode, body: chunk ? JSON.parse(String(chunk)) : undefined });
      return original(chunk as never, ...(rest as []));
    }) as typeof res.end;
    await handler!(req, res);
  });
  fn.listen(0, "127.0.0.1");
  await once(fn, "listening");
  const fnUrl = `http://127.0.0.1:${(fn.address() as AddressInfo).port}`;
  const queue = cloudTasksQueue({
    queue: emulator.queue,
    targetUrl: `${fnUrl}/webhook-delivery`,
    emulatorHost: emulator.host,
  });
  app = await startWebhookApp({
    env: {
      SVC_WEBHOOK_DELIVERY: "cloudtasks",
      SVC_WEBHOOK_TASKS_QUEUE: emulator.queue,
      SVC_WEBHOOK_TASKS_TARGET_URL: `${fnUrl}/webhook-delivery`,
      CLOUD_TASKS_EMULATOR_HOST: emulator.host,
    },
    context: {
      webhooks: {
        taskQueue: {
          enqueue: (task) => {
            enqueued.push(task);
            return queue.enqueue(task);
          },
          close: () => queue.close(),
        },
      },
    },
  });
  handler = nodeHandler(app.server.ctx, webhookDeliveryRoutes, (req) => readBody(req, 64 * 1024));
  fx = await repoWithOwner(app as never);
});
afterAll(async () => {
  await app?.close();
  fn?.close();
});

describe("Cloud Tasks delivery", () => {
  it("a commit becomes a task, and the task's call to the delivery function delivers the event", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/ct"), secret: "k" });
    await commit(fx, "main", { "a.md": "1" }, "through tasks");
    const [got] = await rx.waitFor(1, "/ct"); // no drain: the pump was woken by the commit
    expect(got!.body.data["message"]).toBe("through tasks");
    expect(got!.headers["x-svc-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    const row = await until(async () => (await outboxOf(app, sub.id)).find((r) => r.delivered_at !== null));
    expect(row).toMatchObject({ attempts: 1, last_status: 200, leased_until: null });
    expect(calls.at(-1)).toEqual({ status: 200, body: { result: "delivered" } });
  });

  it("a failed attempt schedules the next attempt's task at next_attempt_at", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/ct-retry") });
    rx.set({ kind: "status", status: 503 });
    const start = new Date();
    app.clock.set(start); // the tasks are scheduled in real time: the clock starts from now
    await commit(fx, "main", { "b.md": "1" }, "retried");
    await rx.waitFor(1, "/ct-retry");
    const failed = await until(async () =>
      (await outboxOf(app, sub.id)).find((r) => r.attempts === 1 && r.last_status === 503),
    );
    expect(failed.next_attempt_at.getTime()).toBe(start.getTime() + 1000);
    // The next attempt's task is scheduled at exactly that time, to the millisecond.
    // The retry's task is created after the failure is recorded: wait for it, not just the row.
    const tasksOf = () => enqueued.filter((t) => JSON.parse(String(t.body)).outbox_id === failed.id);
    const retryTask = await until(async () => (tasksOf().length >= 2 ? tasksOf().at(-1) : undefined));
    expect(retryTask.scheduleAt.getTime()).toBe(failed.next_attempt_at.getTime());
    rx.set({ kind: "ok" });
    const [, second] = await rx.waitFor(2, "/ct-retry");
    // The emulator held the task until its schedule time: one second after the failure.
    expect(Date.now() - start.getTime()).toBeGreaterThanOrEqual(950);
    expect(second!.body.id).toBe(rx.at("/ct-retry")[0]!.body.id);
    const row = await until(async () => (await outboxOf(app, sub.id)).find((r) => r.delivered_at !== null));
    expect(row).toMatchObject({ attempts: 2, last_status: 200 });
    await app.sql("DELETE FROM subscriptions WHERE id = $1", [sub.id]);
  });

  it("a stale or repeated task does nothing; a malformed one is refused", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/ct-stale") });
    await commit(fx, "main", { "c.md": "1" });
    await rx.waitFor(1, "/ct-stale");
    const row = await until(async () => (await outboxOf(app, sub.id)).find((r) => r.delivered_at !== null));
    const [{ lease_seq }] = (await app.sql<{ lease_seq: number }>(
      "SELECT lease_seq FROM webhook_outbox WHERE id = $1",
      [row.id],
    )) as [{ lease_seq: number }];
    const fnUrl = `http://127.0.0.1:${(fn.address() as AddressInfo).port}`;
    for (const lease of [1, lease_seq, lease_seq + 5]) {
      const res = await fetch(`${fnUrl}/webhook-delivery`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ outbox_id: row.id, lease }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ result: "stale" });
    }
    const bad = await fetch(`${fnUrl}/webhook-delivery`, { method: "POST", body: "{}" });
    expect(bad.status).toBe(400);
    expect(rx.at("/ct-stale")).toHaveLength(1);
  });

  it("sends a task-handled system subscription's tasks to its own URL; the delivery function never claims them", async () => {
    // As registerAutoMergeSubscription does, with the receiver standing in for the autoMerge function.
    await upsertSystemSubscription(app.server.ctx.pool, app.clock, {
      name: AUTO_MERGE_SYSTEM,
      eventTypes: ["com.svc.commit.created"],
      url: rx.url("/am"),
      secret: null,
    });
    try {
      await commit(fx, "main", { "am.md": "1" }, "handled elsewhere");
      const [task] = await rx.waitFor(1, "/am");
      // The task itself, not an event: the handling function claims the row with it.
      const body = task!.body as unknown as { outbox_id: number; lease: number };
      expect(Object.keys(body).sort()).toEqual(["lease", "outbox_id"]);
      expect(task!.headers["x-svc-signature"]).toBeUndefined();
      const fnUrl = `http://127.0.0.1:${(fn.address() as AddressInfo).port}`;
      const res = await fetch(`${fnUrl}/webhook-delivery`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(await res.json()).toEqual({ result: "stale" });
      const [row] = await app.sql<{ attempts: number; delivered: boolean; lease_seq: number }>(
        "SELECT attempts, delivered_at IS NOT NULL AS delivered, lease_seq::int AS lease_seq FROM webhook_outbox WHERE id = $1",
        [body.outbox_id],
      );
      expect(row).toEqual({ attempts: 0, delivered: false, lease_seq: body.lease });
    } finally {
      await deleteSystemSubscription(app.server.ctx.pool, AUTO_MERGE_SYSTEM);
    }
  });

  it("holds a suspended subscription's events and sends them when it is resumed", async () => {
    const sub = await subscribe(fx.client, { repo: fx.repo, url: rx.url("/ct-held") });
    await app.sql("UPDATE subscriptions SET suspended_at = $2, failure_count = 1 WHERE id = $1", [
      sub.id,
      app.clock.now(),
    ]);
    await commit(fx, "main", { "d.md": "1" }, "held");
    await app.webhooks.drain();
    expect(rx.at("/ct-held")).toHaveLength(0);
    expect((await fx.client.post(`/subscriptions/${sub.id}/resume`)).status).toBe(204);
    const [got] = await rx.waitFor(1, "/ct-held");
    expect(got!.body.data["message"]).toBe("held");
  });

  it("a task's schedule time is the attempt's due time to the millisecond", async () => {
    const requests: { task: { scheduleTime: { seconds: number; nanos: number } } }[] = [];
    const client = {
      createTask: async (request: (typeof requests)[number]) => {
        requests.push(request);
        return [{}];
      },
      close: async () => {},
    } as unknown as CloudTasksClient;
    const queue = cloudTasksQueue({ queue: emulator.queue, targetUrl: "http://127.0.0.1:9/x" }, client);
    const due = new Date("2026-11-23T13:45:07.461Z");
    await queue.enqueue({ id: "w-exact", scheduleAt: due, body: Buffer.from("{}") });
    const { seconds, nanos } = requests[0]!.task.scheduleTime;
    expect(seconds * 1000 + nanos / 1e6).toBe(due.getTime());
    expect(nanos).toBe(461_000_000);
  });

  it("creating a task is idempotent by its id, so a retried enqueue makes no second task", async () => {
    const queue = cloudTasksQueue({
      queue: emulator.queue,
      targetUrl: "http://127.0.0.1:9/never", // scheduled far ahead and deleted with the emulator
      emulatorHost: emulator.host,
    });
    const id = taskId({ id: 999_999, lease: 1 });
    expect(id).toMatch(/^w[0-9a-f]{8}-999999-1$/);
    const task = { id, scheduleAt: new Date(Date.now() + 3600_000), body: Buffer.from("{}") };
    expect(await queue.enqueue(task)).toBe("created");
    expect(await queue.enqueue(task)).toBe("exists");
    await queue.close();
  });
});
