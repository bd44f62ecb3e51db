import type { IncomingMessage } from "node:http";
import { http } from "@google-cloud/functions-framework";
import { loadConfig } from "../shared/config.ts";
import { type AppContext, createContext } from "../shared/context.ts";
import { migrate } from "../shared/db/migrate.ts";
import { DomainError } from "../shared/errors.ts";
import { nodeHandler } from "../shared/http/node.ts";
import { createLogger } from "../shared/log.ts";
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
  context ??= (async () => {
    const config = loadConfig();
    if (!config.DATABASE_URL) throw new Error("DATABASE_URL is required in the cloud");
    await migrate(config.DATABASE_URL);
    return createContext(
      config,
      createLogger({ format: config.LOG_FORMAT, level: config.LOG_LEVEL }),
      config.DATABASE_URL,
    );
  })();
  return context;
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

for (const [name, routes] of Object.entries(groups)) {
  let handler: ReturnType<typeof nodeHandler> | undefined;
  http(name, async (req, res) => {
    const ctx = await appContext();
    handler ??= nodeHandler(ctx, routes, frameworkBody(ctx.config.SVC_MAX_BODY_BYTES));
    await handler(req, res);
  });
}

// Cloud Tasks calls this function with each webhook delivery attempt, and Cloud Scheduler with the
// sweep (docs/events.md, "Webhooks"). It is private: not behind the load balancer, invokable only
// by the tasks' and the scheduler's service accounts.
{
  let handler: ReturnType<typeof nodeHandler> | undefined;
  http("webhookDelivery", async (req, res) => {
    const ctx = await appContext();
    handler ??= nodeHandler(ctx, webhookDeliveryRoutes, frameworkBody(ctx.config.SVC_MAX_BODY_BYTES));
    await handler(req, res);
  });
}
