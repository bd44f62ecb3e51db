import type { DatabaseTarget } from "../db/target.ts";
import type { Logger } from "../log.ts";
import type { Cursor } from "./cursor.ts";
import { type LoggedEvent, logHead, readAfter } from "./log.ts";
import { WakeLoop } from "./wake.ts";

/**
 * Where a hub gets new events from: every committed event exactly once per delivery, in cursor
 * order, in batches handed to `sink` one at a time. Locally the hub reads the log itself, woken by
 * LISTEN/NOTIFY; in the cloud a Pub/Sub subscription feeds it (pubsub.ts).
 */
export interface EventFeed {
  /** Starts; resolves with the cursor before the first event it will hand to `sink`. */
  start(sink: (events: LoggedEvent[]) => Promise<void>): Promise<Cursor>;
  /** Sets the sweep interval (tests). */
  setSweep(ms: number): void;
  /** Reads at once rather than on the next notification or sweep. */
  wake(): void;
  /** This process currently relays the log to Pub/Sub (always false for the local feed). */
  readonly relaying: boolean;
  close(): Promise<void>;
}

export const READ_BATCH = 500;

/** The feed's cursor, which the loop's first connection sets before any step runs. */
function headOrThrow(cursor: Cursor | undefined): Cursor {
  if (cursor === undefined) throw new Error("the event feed has no head: its loop never connected");
  return cursor;
}

/** The local feed: one LISTEN connection per process and a sweep; reads the log by cursor. */
export function postgresFeed(opts: { databaseUrl: DatabaseTarget; log: Logger; sweepMs: number }): EventFeed {
  let cursor: Cursor | undefined;
  let loop: WakeLoop | undefined;
  return {
    async start(sink) {
      loop = new WakeLoop({
        databaseUrl: opts.databaseUrl,
        name: "quire-sse-hub",
        log: opts.log,
        sweepMs: opts.sweepMs,
        async step(client) {
          const batch = await readAfter(client, headOrThrow(cursor), READ_BATCH);
          const last = batch.events.at(-1);
          if (last !== undefined) {
            await sink(batch.events);
            cursor = last.cursor;
          }
          return batch.more ? "more" : batch.held ? "held" : "idle";
        },
        // First connection only: the head is where this process starts listening.
        onConnect: async (client) => {
          cursor ??= await logHead(client);
        },
      });
      await loop.start();
      return headOrThrow(cursor);
    },
    setSweep: (ms) => loop?.setSweep(ms),
    wake: () => loop?.wake(),
    relaying: false,
    async close() {
      await loop?.close();
    },
  };
}
