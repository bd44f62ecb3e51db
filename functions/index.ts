import type { IncomingMessage, ServerResponse } from "node:http";
import { http } from "@google-cloud/functions-framework";
import { registerRunnerSubscription } from "../shared/ci/scheduler/webhook.ts";
import { loadConfig } from "../shared/config.ts";
import { type AppContext, createContext } from "../shared/context.ts";
import { migrate } from "../shared/db/migrate.ts";
import { DomainError } from "../shared/errors.ts";
import { errorReply } from "../shared/http/dispatch.ts";
import { nodeHandler, writeReply } from "../shared/http/node.ts";
import { createLogger } from "../shared/log.ts";
import { ciCronRoutes, ciReaperRoutes } from "./ci-timers/routes.ts";
import { groups } from "./groups.ts";
import { webhookDeliveryRoutes } from "./webhook-delivery/routes.ts";

/**
 * The cloud entry point: each endpoint group is its own HTTP function, registered with the
 * functions framework under the group's name. The context (pool, adapters) is built on the first
 * request of an instance, after migrations (which wait on an advisory lock, so instances that
 * start together are safe).
 */
let context: Promise<AppContext> | undefined;

function appContext(): Promise<AppContext> {
  // A failed start (database unreachable at a cold start) is not kept: the next request retries.
  context ??= (async () => {
    const config = loadConfig();
    if (!config.DATABASE_URL) throw new Error("DATABASE_URL is required in the cloud");
    await migrate(config.DATABASE_URL);
    const ctx = createContext(
      config,
      createLogger({ format: config.LOG_FORMAT, level: config.LOG_LEVEL }),
      config.DATABASE_URL,
    );
    await registerRunnerSubscription(ctx);
    return ctx;
  })().catch((err) => {
    context = undefined;
    throw err;
  });
  return context;
}

/**
 * A request handler for a route table, built once the context is: until then (or when the start
 * fails) it answers 503 in Quire's error shape, never through the framework's crash handler.
 */
function functionHandler(routes: Parameters<typeof nodeHandler>[1]) {
  let handler: ReturnType<typeof nodeHandler> | undefined;
  return async (req: IncomingMessage, res: ServerResponse) => {
    let ctx: AppContext;
    try {
      ctx = await appContext();
    } catch {
      writeReply(
        res,
        errorReply(
          new DomainError(
            "UNAVAILABLE",
            "the service is starting or its database is not available; try again",
          ),
          "-",
        ),
      );
      return;
    }
    handler ??= nodeHandler(ctx, routes, frameworkBody(ctx.config.SVC_MAX_BODY_BYTES));
    await handler(req, res);
  };
}

/** The framework has already read the body into `rawBody`; Quire still enforces its own limit. */
function frameworkBody(limit: number) {
  return async (req: IncomingMessage) => {
    const raw = (req as IncomingMessage & { rawBody?: Buffer }).rawBody;
    if (raw && raw.length > limit)
      throw new DomainError(
        "PAYLOAD_TOO_LARGE",
        `the request body is larger than the limit of ${limit} bytes`,
      );
    return raw;
  };
}

for (const [name, routes] of Object.entries(groups)) http(name, functionHandler(routes));

// Cloud Tasks calls this function with each webhook delivery attempt, and Cloud Scheduler with the
// sweep (docs/events.md, "Webhooks"). It is private: not behind the load balancer, invokable only
// by the tasks' and the scheduler's service accounts.
http("webhookDelivery", functionHandler(webhookDeliveryRoutes));

// Cloud Scheduler calls these every minute (docs/ci-scheduler.md); private like webhookDelivery.
http("ciCron", functionHandler(ciCronRoutes));
http("ciReaper", functionHandler(ciReaperRoutes));
