import type pg from "pg";
import type { Env } from "../config.ts";
import type { DatabaseTarget } from "../db/target.ts";
import type { Logger } from "../log.ts";
import { postgresFeed } from "./feed.ts";
import { createEventHub, defaultHubOptions, type EventHub } from "./hub.ts";
import { pubsubClient, pubsubFeed } from "./pubsub.ts";

export type { EventHub } from "./hub.ts";

/** The SSE hub of this process, fed by LISTEN/NOTIFY (local) or Pub/Sub (SVC_EVENT_FANOUT=pubsub). */
export function eventHubFromConfig(
  config: Env,
  log: Logger,
  pool: pg.Pool,
  databaseUrl: DatabaseTarget,
): EventHub {
  const sweepMs = defaultHubOptions.sweepMs;
  const feed =
    config.SVC_EVENT_FANOUT === "pubsub"
      ? pubsubFeed({
          pubsub: pubsubClient({
            projectId: config.GOOGLE_CLOUD_PROJECT,
            emulatorHost: config.PUBSUB_EMULATOR_HOST,
          }),
          topic: config.SVC_PUBSUB_TOPIC,
          subscription: config.SVC_PUBSUB_SUBSCRIPTION,
          pool,
          databaseUrl,
          log,
          sweepMs,
        })
      : postgresFeed({ databaseUrl, log, sweepMs });
  return createEventHub({ pool, log, feed, options: { retentionDays: config.SVC_EVENT_RETENTION_DAYS } });
}
