import http from "node:http";
import path from "node:path";
import pg from "pg";
import { startCiTimers } from "../shared/ci/scheduler/timers.ts";
import { registerRunnerSubscription } from "../shared/ci/scheduler/webhook.ts";
import { loadConfig } from "../shared/config.ts";
import { type AppContext, type ContextOptions, createContext } from "../shared/context.ts";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../shared/db/embedded.ts";
import { migrateIfPending } from "../shared/db/migrate.ts";
import { listenOn } from "../shared/http/listen.ts";
import { nodeHandler, readBody } from "../shared/http/node.ts";
import { createLogger } from "../shared/log.ts";
import { type AutoMergeRelay, createAutoMergeRelay } from "../shared/merge/auto-merge-relay.ts";
import { registerAutoMergeSubscription } from "../shared/merge/auto-merge-tasks.ts";
import { checkEmbeddedPostgresFree, httpPortTaken, portInUse } from "../shared/startup.ts";
import { allRoutes } from "./groups.ts";

export interface RunningServer {
  url: string;
  ctx: AppContext;
  /** This process's auto-merge relay (docs/auto-merge.md); tests stop it to restart it elsewhere. */
  autoMerge: AutoMergeRelay;
  close(): Promise<void>;
}

const EMBEDDED_DATABASE = "quire";

/** Starts the embedded cluster under SVC_DATA_DIR and makes sure Quire's database exists in it. */
async function embeddedDatabase(
  dataDir: string,
  port: number,
  log: (line: string) => void,
): Promise<{ url: string; server: EmbeddedDatabase }> {
  const clusterDir = path.join(dataDir, "postgres");
  await checkEmbeddedPostgresFree({ dataDir, clusterDir, port });
  const server = await startEmbeddedPostgres({
    dataDir: clusterDir,
    port,
    persistent: true,
    log,
  });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [
      EMBEDDED_DATABASE,
    ]);
    if (!rowCount) await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await admin.end();
  }
  return { url: server.url.replace(/\/postgres$/, `/${EMBEDDED_DATABASE}`), server };
}

/**
 * Quire's local mode: every endpoint group on one HTTP server. With DATABASE_URL unset it runs
 * embedded PostgreSQL with its data under SVC_DATA_DIR, so a restart keeps the data. Migrations
 * run before the port opens. The tests start Quire through this same function.
 */
export async function startServer(
  env: Record<string, string | undefined> = process.env,
  opts: { logTo?: NodeJS.WritableStream; context?: ContextOptions } = {},
): Promise<RunningServer> {
  const config = loadConfig(env);
  const log = createLogger({ format: config.LOG_FORMAT, level: config.LOG_LEVEL }, opts.logTo);
  if (config.DEV_IDENTITY) {
    log.warn(
      `DEV_IDENTITY is set: EVERY request is treated as '${config.DEV_IDENTITY}'${config.DEV_IDENTITIES.length > 1 ? ` (or whichever of DEV_IDENTITIES ${config.DEV_IDENTITIES.join(", ")} it names)` : ""} WITHOUT ANY TOKEN CHECK. Local development only; never in production.`,
    );
  }
  if (!config.DEV_IDENTITY && !config.OIDC_CLIENT_ID) {
    log.warn(
      "no identity provider is configured for sign-in (OIDC_CLIENT_ID is unset), so no browser can sign in. To try Quire locally, start in development mode: DEV_IDENTITY=you@example.com npm start (docs/configuration.md)",
    );
  }
  // Before the database starts, so a second `npm start` stops with one line and starts nothing.
  if (config.PORT !== 0 && (await portInUse(config.PORT, config.HOST))) throw httpPortTaken(config.PORT);
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    const db = await embeddedDatabase(config.SVC_DATA_DIR, config.SVC_EMBEDDED_PG_PORT, (line) =>
      log.debug({ postgres: line }, "embedded postgres"),
    );
    embedded = db.server;
    databaseUrl = db.url;
    log.info({ data_dir: config.SVC_DATA_DIR }, "using embedded PostgreSQL");
  }
  await migrateIfPending(databaseUrl);
  const ctx = createContext(config, log, databaseUrl, opts.context);
  await ctx.events.start();
  await ctx.webhooks.start();
  await registerRunnerSubscription(ctx);
  await registerAutoMergeSubscription(ctx);
  const autoMerge = createAutoMergeRelay(ctx, databaseUrl);
  await autoMerge.start();
  const stopCiTimers = config.SVC_CI_TIMERS ? startCiTimers(ctx) : () => {};
  const server = http.createServer(
    nodeHandler(ctx, allRoutes, (req) => readBody(req, config.SVC_MAX_BODY_BYTES)),
  );
  const { url, port } = await listenOn(server, config.HOST, config.PORT).catch(async (err) => {
    await embedded?.stop();
    throw err;
  });
  ctx.selfUrl = url;
  log.info({ host: config.HOST, port, url }, `quire is listening on ${url}`);
  return {
    url,
    ctx,
    autoMerge,
    async close() {
      stopCiTimers();
      await autoMerge.close();
      await ctx.events.close();
      await ctx.webhooks.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ctx.policies.close();
      await ctx.jobSigner.close?.();
      await ctx.logSigner.close?.();
      await ctx.pool.end();
      await embedded?.stop();
    },
  };
}
