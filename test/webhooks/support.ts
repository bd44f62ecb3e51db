import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { startServer } from "../../functions/server.ts";
import { ManualClock } from "../../shared/clock.ts";
import type { ContextOptions } from "../../shared/context.ts";
import type { WebhookDelivery } from "../../shared/webhooks/delivery.ts";
import type { Resolver } from "../../shared/webhooks/guard.ts";
import { api, type Options } from "../support/api.ts";

type EventTypes = Options<"POST", "/subscriptions">["body"]["event_types"];

import { ADMIN, appAccess, freshDatabase, type TestApp } from "../support/app.ts";
import type { Client } from "../support/client.ts";
import { startTestIdp } from "../support/idp.ts";
import { expectStatus, type RepoFixture, repoWithOwner, useFixture } from "../support/world.ts";

/** The send timeout of the webhook test apps. */
export const WEBHOOK_TEST_TIMEOUT_MS = 3000;

/** A Quire instance for webhook tests: a manual clock, a short attempt timeout, private URLs allowed. */
export interface WebhookApp extends TestApp {
  clock: ManualClock;
  webhooks: WebhookDelivery;
}

export interface WebhookAppOptions {
  env?: Record<string, string>;
  context?: ContextOptions;
  /** Another instance on this app's (or this) database and identity provider. */
  sharing?: Pick<WebhookApp, "databaseUrl" | "idp"> & { clock?: ManualClock };
  clock?: ManualClock;
}

const quiet = () =>
  process.env["QUIRE_TEST_LOGS"] === "1" ? process.stdout : new Writable({ write: (_c, _e, done) => done() });

/**
 * Starts Quire with the server function `npm start` uses, on a fresh database (or `sharing`'s),
 * with a manual clock (tests move time, never sleep for it) and a 3 s attempt timeout (WEBHOOK_TEST_TIMEOUT_MS).
 * SVC_WEBHOOK_ALLOW_PRIVATE=true because every receiver runs on 127.0.0.1.
 */
export async function startWebhookApp(opts: WebhookAppOptions = {}): Promise<WebhookApp> {
  const idp = opts.sharing?.idp ?? (await startTestIdp());
  const databaseUrl = opts.sharing?.databaseUrl ?? (await freshDatabase());
  const clock = opts.clock ?? opts.sharing?.clock ?? new ManualClock();
  const server = await startServer(
    {
      DATABASE_URL: databaseUrl,
      PORT: "0",
      OIDC_ISSUER: idp.issuer,
      GLOBAL_ADMINS: ADMIN,
      LOG_LEVEL: "error",
      SVC_WEBHOOK_ALLOW_PRIVATE: "true",
      ...opts.env,
    },
    {
      logTo: quiet(),
      // Long enough that a send to a local receiver never times out on a busy 2-core machine
      // (a timeout is a failed attempt, retried only when the manual clock moves): 500 ms did.
      context: {
        clock,
        ...opts.context,
        webhooks: { timeoutMs: WEBHOOK_TEST_TIMEOUT_MS, ...opts.context?.webhooks },
      },
    },
  );
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  return {
    url: server.url,
    server,
    idp,
    databaseUrl,
    clock,
    webhooks: server.ctx.webhooks,
    ...appAccess(server.url, idp, pool),
    async close() {
      await pool.end();
      await server.close();
      if (!opts.sharing) await idp.close();
    },
  };
}

/** One request a receiver got. */
export interface Receipt {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  /** `Date.now()` when the request's body had arrived. */
  receivedAt: number;
  body: { id: string; type: string; data: Record<string, unknown>; [k: string]: unknown };
}

export type Mode =
  | { kind: "ok" }
  | { kind: "status"; status: number }
  | { kind: "hang" }
  | { kind: "redirect"; to: string };

/**
 * A real HTTP receiver on 127.0.0.1 that answers as told: 200, any status, a redirect, or never
 * (until `release()`). Every request is recorded, whatever the answer.
 */
export interface Receiver {
  url(path?: string): string;
  port: number;
  receipts: Receipt[];
  /** Receipts of one path. */
  at(path: string): Receipt[];
  set(mode: Mode): void;
  /** Answers every request left hanging with 200. */
  release(): void;
  /** Resolves once `n` requests have arrived (waits on I/O, at most 10 s). */
  waitFor(n: number, path?: string): Promise<Receipt[]>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** Runs on each request before it is answered (while its attempt is still in flight). */
  beforeAnswer?: (receipt: Receipt) => Promise<void>;
}

export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  let mode: Mode = { kind: "ok" };
  const receipts: Receipt[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks);
      let body: Receipt["body"];
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = { id: "", type: "", data: {} };
      }
      const receipt = { path: req.url ?? "/", headers: req.headers, raw, receivedAt: Date.now(), body };
      receipts.push(receipt);
      const m = mode; // as it was when the request arrived
      await opts.beforeAnswer?.(receipt).catch(() => {});
      if (m.kind === "ok") res.writeHead(200).end("ok");
      else if (m.kind === "status") res.writeHead(m.status).end();
      else if (m.kind === "redirect") res.writeHead(302, { location: m.to }).end();
      else {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const at = (path: string) => receipts.filter((r) => r.path === path);
  return {
    port,
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    receipts,
    at,
    set(m) {
      mode = m;
    },
    release() {
      for (const res of hanging) res.writeHead(200).end("late");
      hanging.clear();
    },
    async waitFor(n, path) {
      const list = () => (path ? at(path) : receipts);
      const deadline = Date.now() + 10_000;
      while (list().length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${list().length} of ${n} requests`);
        await sleep(10);
      }
      return list();
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Creates a subscription and returns it; fails the test unless it is created. */
export async function subscribe(
  as: Client,
  body: { repo?: string; event_types?: EventTypes; url: string; secret?: string },
) {
  const { url, secret, ...rest } = body;
  const res = await api(as).post("/subscriptions", {
    body: { ...rest, backend: "webhook", config: secret === undefined ? { url } : { url, secret } },
  });
  return expectStatus(res, 201);
}

/** The outbox rows of a subscription, oldest first. */
export async function outboxOf(app: WebhookApp, subscriptionId: string) {
  return app.sql<{
    id: number;
    event_id: string;
    attempts: number;
    next_attempt_at: Date;
    leased_until: Date | null;
    delivered_at: Date | null;
    last_status: number | null;
    last_error: string | null;
  }>("SELECT * FROM webhook_outbox WHERE subscription_id = $1 ORDER BY id", [subscriptionId]);
}

export async function subscriptionRow(app: WebhookApp, id: string) {
  const [row] = await app.sql<{ failure_count: number; suspended_at: Date | null }>(
    "SELECT failure_count, suspended_at FROM subscriptions WHERE id = $1",
    [id],
  );
  return row!;
}

export { ADMIN };

/**
 * For a file (or a describe block): a webhook app that refuses private addresses (the SSRF guard
 * on, names answered by `resolve`), a receiver and a repo, started before its tests.
 */
export function useGuardedWebhookApp(resolve: Resolver): { app: WebhookApp; rx: Receiver; fx: RepoFixture } {
  const app = useFixture(() =>
    startWebhookApp({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: "false" }, context: { webhooks: { resolve } } }),
  );
  const rx = useFixture(startReceiver);
  const fx = useFixture(() => repoWithOwner(app as never));
  return { app, rx, fx };
}
