import type pg from "pg";
import { type Clock, systemClock } from "../clock.ts";
import type { Env } from "../config.ts";
import type { DatabaseTarget } from "../db/target.ts";
import type { Logger } from "../log.ts";
import { type EventFeed, postgresFeed } from "./feed.ts";
import { createEventHub, defaultHubOptions, type EventHub } from "./hub.ts";

export type { EventHub } from "./hub.ts";

/** The SSE hub of this process, fed by LISTEN/NOTIFY (local) or Pub/Sub (SVC_EVENT_FANOUT=pubsub). */
export function eventHubFromConfig(
  config: Env,
  log: Logger,
  pool: pg.Pool,
  databaseUrl: DatabaseTarget,
  clock: Clock = systemClock,
): EventHub {
  const sweepMs = defaultHubOptions.sweepMs;
  const feed =
    config.SVC_EVENT_FANOUT === "pubsub"
      ? madeOnStart(async () => {
          const { pubsubClient, pubsubFeed } = await import("./pubsub.ts");
          return pubsubFeed({
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
          });
        })
      : postgresFeed({ databaseUrl, log, sweepMs });
  return createEventHub({
    pool,
    log,
    feed,
    clock,
    options: { retentionDays: config.SVC_EVENT_RETENTION_DAYS },
  });
}

/**
 * A feed made when the hub starts it: the Pub/Sub feed imports its client library then, not when
 * the process starts (a function whose hub never starts never loads it).
 */
function madeOnStart(make: () => Promise<EventFeed>): EventFeed {
  let feed: EventFeed | undefined;
  let sweepMs: number | undefined;
  return {
    async start(sink) {
      feed = await make();
      if (sweepMs !== undefined) feed.setSweep(sweepMs);
      return feed.start(sink);
    },
    setSweep(ms) {
      sweepMs = ms;
      feed?.setSweep(ms);
    },
    wake() {
      feed?.wake();
    },
    get relaying() {
      return feed?.relaying ?? false;
    },
    async close() {
      await feed?.close();
    },
  };
}
