import type { IncomingMessage, ServerResponse } from "node:http";
import { http } from "@google-cloud/functions-framework";
import { registerRunnerSubscription } from "../shared/ci/scheduler/webhook.ts";
import { ConfigError, loadConfig } from "../shared/config.ts";
import { type AppContext, createContext } from "../shared/context.ts";
import { pendingMigrations } from "../shared/db/migrate.ts";
import { configuredDatabase } from "../shared/db/target.ts";
import { DomainError } from "../shared/errors.ts";
import { refusalOutsideRoutes } from "../shared/http/dispatch.ts";
import { nodeHandler, writeReply } from "../shared/http/node.ts";
import { createLogger, type Logger } from "../shared/log.ts";
import { registerAutoMergeSubscription } from "../shared/merge/auto-merge-tasks.ts";
import { cloudFunctions } from "./groups.ts";
import { readLargeJsonBodiesFirst } from "./large-bodies.ts";

/**
 * The cloud entry point: each endpoint group is its own HTTP function, registered with the
 * functions framework under the group's name. The context (pool, adapters) is built on the first
 * request of an instance. Functions never migrate: migrations are a step of the deployment
 * (functions/migrate.ts, docs/deploy.md "Migrations"), and an instance whose code needs a migration
 * the database lacks refuses to serve (503) until that step has run.
 */
let context: Promise<AppContext> | undefined;

// The framework listens on every interface (Cloud Run's PORT), and DEV_IDENTITY makes every caller
// that identity without a token: an instance with either development setting refuses to load.
for (const name of ["DEV_IDENTITY", "DEV_IDENTITIES"])
  if (process.env[name]?.trim())
    throw new ConfigError(
      `invalid configuration: ${name}: is refused in the cloud functions, which listen on every interface; it is for a local server on a loopback address only`,
    );

/** The schema is older than the code: a migration has not been applied. */
class SchemaBehind extends DomainError {
  constructor(pending: string[]) {
    super(
      "UNAVAILABLE",
      `the database schema is behind this version of the service: migration ${pending[0]} has not been applied` +
        (pending.length > 1 ? ` (${pending.length} pending)` : "") +
        "; run the migration step of the deployment (npm run migrate)",
    );
  }
}

function appContext(log: Logger): Promise<AppContext> {
  // A failed start (database unreachable, schema behind) is not kept: the next request retries.
  context ??= (async () => {
    const config = loadConfig();
    const db = await configuredDatabase(config);
    if (!db) throw new Error("SVC_CLOUD_SQL_INSTANCE or DATABASE_URL is required in the cloud");
    const ctx = createContext(config, log, db.target);
    try {
      const pending = await pendingMigrations(ctx.pool);
      if (pending.length > 0) throw new SchemaBehind(pending);
      await registerRunnerSubscription(ctx);
      await registerAutoMergeSubscription(ctx);
    } catch (err) {
      await ctx.pool.end().catch(() => {});
      db.close();
      throw err;
    }
    return ctx;
  })().catch((err) => {
    context = undefined;
    throw err;
  });
  return context;
}

let startLog: Logger | undefined;

/** The logger of this instance, made once from the configuration (or its defaults when that is invalid). */
function instanceLog(): Logger {
  if (startLog) return startLog;
  const env = process.env;
  const format = env["LOG_FORMAT"] === "text" ? "text" : "json";
  const level = (["debug", "info", "warn", "error"] as const).find((l) => l === env["LOG_LEVEL"]) ?? "info";
  startLog = createLogger({ format, level });
  return startLog;
}

const NOT_READY = new DomainError(
  "UNAVAILABLE",
  "the service is starting or its database is not available; try again",
);

/**
 * A request handler for a route table, built once the context is: until then (or when the start
 * fails) it answers 503 in Quire's error shape, never through the framework's crash handler.
 */
function functionHandler(routes: Parameters<typeof nodeHandler>[1]) {
  let handler: ReturnType<typeof nodeHandler> | undefined;
  return async (req: IncomingMessage, res: ServerResponse) => {
    let ctx: AppContext;
    try {
      ctx = await appContext(instanceLog());
    } catch (err) {
      if (err instanceof SchemaBehind) instanceLog().error(`not serving: ${err.message}`);
      else instanceLog().warn({ err }, "not serving: the database is not available");
      const refusal = err instanceof SchemaBehind ? err : NOT_READY;
      // As every other refusal of the group: the web group's carries its security headers.
      writeReply(
        res,
        refusalOutsideRoutes(routes, { url: req.url ?? "/", headers: req.headers }, refusal, "-"),
      );
      return;
    }
    // The webhook tasks of the request's commits are created before it answers (docs/events.md).
    handler ??= nodeHandler(ctx, routes, frameworkBody(ctx.config.SVC_MAX_BODY_BYTES), {
      jsonOf: frameworkJson,
      beforeReply: () => ctx.webhooks.settle(),
    });
    await handler(req, res);
  };
}

/** The framework has already read the body into `rawBody`; Quire still enforces its own limit. */
function frameworkBody(limit: number) {
  return async (req: IncomingMessage) => {
    const raw = (req as FrameworkRequest).rawBody;
    if (raw && raw.length > limit)
      throw new DomainError(
        "PAYLOAD_TOO_LARGE",
        `the request body is larger than the limit of ${limit} bytes`,
      );
    return raw;
  };
}

type FrameworkRequest = IncomingMessage & { rawBody?: Buffer; body?: unknown };

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The framework's parse of a JSON body (`req.body`), so that Quire does not parse it a second time:
 * a 30 MiB commit would otherwise be held twice more, as text and as objects (docs/deploy.md,
 * "Memory of the repos function"). Only for `application/json`, the one type the framework parses
 * as JSON for Quire, and not after a byte-order mark, which the framework skips and Quire refuses.
 */
function frameworkJson(req: IncomingMessage): unknown {
  const { body, rawBody } = req as FrameworkRequest;
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  if (type !== "application/json" || rawBody === undefined || rawBody.subarray(0, 3).equals(UTF8_BOM))
    return undefined;
  if (typeof body !== "object" || body === null || Buffer.isBuffer(body)) return undefined;
  return body;
}

// One function per entry of the deployment table (functions/groups.ts, docs/routing.md): the public
// groups behind the load balancer, and the internal functions that Cloud Tasks (webhookDelivery)
// and Cloud Scheduler (webhookDelivery's sweep, ciCron, ciReaper) call with OIDC tokens.
for (const [name, routes] of Object.entries(cloudFunctions)) http(name, functionHandler(routes));
readLargeJsonBodiesFirst();
