import http from "node:http";
import { ConfigError, loadConfig } from "../../shared/config.ts";
import type { AppContext } from "../../shared/context.ts";
import { configuredDatabase } from "../../shared/db/target.ts";
import { listenOn } from "../../shared/http/listen.ts";
import { nodeHandler, readBody } from "../../shared/http/node.ts";
import { createLogger } from "../../shared/log.ts";
import { eventRoutes } from "../events/routes.ts";
import { healthRoutes } from "../health/routes.ts";
import { streamContext } from "./context.ts";

/** The routes of the event stream service: the two streams, and /healthz for the platform's probes. */
export const streamServiceRoutes = [...healthRoutes, ...eventRoutes];

export interface RunningStreamService {
  url: string;
  ctx: AppContext;
  /** Ends every stream with a last comment, stops listening, and releases the pool. */
  close(): Promise<void>;
}

// Streams end at once on close; a connection still open after this long is cut.
const CLOSE_GRACE_MS = 5_000;

/**
 * The event stream service (docs/deploy.md, "The event stream service"): a long-lived HTTP server
 * for `GET /events` and `GET /repos/{name}/-/events`, apart from the functions. It needs a
 * database it does not own (Cloud SQL or DATABASE_URL; no embedded PostgreSQL, no migrations: the functions'
 * migration step owns the schema) and starts nothing but the event hub: no CI timers, no webhook
 * deliverer. With SVC_EVENT_FANOUT=pubsub its hub is fed by Pub/Sub and it runs the relay that
 * publishes the log to the topic (one instance at a time, under an advisory lock).
 */
export async function startStreamService(
  env: Record<string, string | undefined> = process.env,
  opts: { logTo?: NodeJS.WritableStream } = {},
): Promise<RunningStreamService> {
  const config = loadConfig(env);
  // Cloud SQL through the connector, or DATABASE_URL: never embedded PostgreSQL.
  const db = await configuredDatabase(config);
  if (!db)
    throw new ConfigError(
      "invalid configuration: DATABASE_URL: SVC_CLOUD_SQL_INSTANCE or DATABASE_URL is required by the event stream service",
    );
  const log = createLogger({ format: config.LOG_FORMAT, level: config.LOG_LEVEL }, opts.logTo);
  const ctx = streamContext(config, log, db.target);
  // Started now, not on the first stream: the relay must publish even while no client listens.
  await ctx.events.start();
  const server = http.createServer(
    nodeHandler(ctx, streamServiceRoutes, (req) => readBody(req, config.SVC_MAX_BODY_BYTES)),
  );
  const { url, port } = await listenOn(server, config.HOST, config.PORT);
  ctx.selfUrl = url;
  log.info(
    { host: config.HOST, port, fanout: config.SVC_EVENT_FANOUT, relaying: ctx.events.relaying },
    "event stream service is listening",
  );
  return {
    url: ctx.selfUrl,
    ctx,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await ctx.events.close(); // every stream gets its last comment and ends
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      await closed;
      clearTimeout(cut);
      await ctx.jobSigner.close?.();
      await ctx.pool.end();
      db.close();
      log.info("event stream service stopped");
    },
  };
}
