import { randomBytes } from "node:crypto";
import { type Message, PubSub, type Subscription, type Topic } from "@google-cloud/pubsub";
import type pg from "pg";
import type { Queryable } from "../db/pool.ts";
import type { DatabaseTarget } from "../db/target.ts";
import type { Logger } from "../log.ts";
import { after, type Cursor, formatCursor, parseCursor } from "./cursor.ts";
import { type EventFeed, READ_BATCH } from "./feed.ts";
import { type LoggedEvent, logHead, readAfter, readRange } from "./log.ts";
import type { CloudEvent } from "./record.ts";
import { WakeLoop } from "./wake.ts";

/**
 * The cloud fan-out: a relay publishes every committed event, in cursor order, to one Pub/Sub
 * topic; each SSE instance consumes its own subscription of that topic. Messages carry the
 * envelope as data and `cursor`, `prev` (the cursor of the event published before it), `type` and
 * `repo` as attributes, all with one ordering key.
 */
export const ORDERING_KEY = "quire-events";

/** A Pub/Sub client for a project; `emulatorHost` (PUBSUB_EMULATOR_HOST) points it at a fake. */
export function pubsubClient(opts: {
  projectId?: string | undefined;
  emulatorHost?: string | undefined;
}): PubSub {
  if (opts.emulatorHost) {
    // `host:port`: plain gRPC to the emulator, no credentials. The universe domain is given so the
    // auth library never probes for Application Default Credentials (the GCE metadata server).
    return new PubSub({
      projectId: opts.projectId ?? "quire-local",
      apiEndpoint: opts.emulatorHost,
      emulatorMode: true,
      universeDomain: "googleapis.com",
    });
  }
  return new PubSub(opts.projectId ? { projectId: opts.projectId } : {});
}

// The relay's cursor, shared by every instance so a restarted relay continues where the last one
// stopped (table event_relay_cursors).
const RELAY_CURSOR = "pubsub";
const relay_cursor_select = `SELECT cursor FROM event_relay_cursors WHERE relay = $1`;
const relay_cursor_upsert = `
  INSERT INTO event_relay_cursors (relay, cursor) VALUES ($1, $2)
  ON CONFLICT (relay) DO UPDATE SET cursor = excluded.cursor, updated_at = now()`;

export async function loadRelayCursor(db: Queryable): Promise<Cursor | undefined> {
  const { rows } = await db.query<{ cursor: string }>(relay_cursor_select, [RELAY_CURSOR]);
  return rows[0] ? parseCursor(rows[0].cursor) : undefined;
}

async function saveRelayCursor(db: Queryable, cursor: Cursor): Promise<void> {
  await db.query(relay_cursor_upsert, [RELAY_CURSOR, formatCursor(cursor)]);
}

// Only the instance holding this session lock relays, so the topic gets one ordered stream.
const RELAY_LOCK = 7_137_400_520_193_512_001n;

export interface Relay {
  start(): Promise<void>;
  wake(): void;
  setSweep(ms: number): void;
  readonly leader: boolean;
  close(): Promise<void>;
}

/**
 * Publishes new events to `topic` in cursor order, at least once: it stores its cursor only after
 * Pub/Sub acknowledged every message up to it, so a relay that dies mid-batch publishes the batch
 * again on restart (subscribers drop what they have had, by cursor). Woken like the hub
 * (LISTEN/NOTIFY plus a sweep); one leader at a time, by a PostgreSQL advisory lock.
 */
export function createRelay(opts: {
  databaseUrl: DatabaseTarget;
  topic: Topic;
  log: Logger;
  sweepMs: number;
}): Relay {
  let leader = false;
  const tryLead = async (client: pg.Client) => {
    const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [
      RELAY_LOCK.toString(),
    ]);
    const [row] = rows;
    if (row === undefined) throw new Error("pg_try_advisory_lock returned no row");
    const { ok } = row;
    if (ok && !leader) opts.log.info("event relay: this instance publishes events to Pub/Sub");
    leader = ok;
  };
  const loop = new WakeLoop({
    databaseUrl: opts.databaseUrl,
    name: "quire-event-relay",
    log: opts.log,
    sweepMs: opts.sweepMs,
    onConnect: async (client) => {
      leader = false;
      await tryLead(client);
    },
    async step(client) {
      if (!leader) await tryLead(client);
      if (!leader) return "idle";
      let cursor = await loadRelayCursor(client);
      if (cursor === undefined) {
        cursor = await logHead(client);
        await saveRelayCursor(client, cursor);
      }
      const batch = await readAfter(client, cursor, READ_BATCH);
      if (batch.events.length > 0) {
        let prev = cursor;
        const acks: Promise<string>[] = [];
        for (const event of batch.events) {
          acks.push(publish(opts.topic, event, prev));
          prev = event.cursor;
        }
        try {
          await Promise.all(acks);
        } catch (err) {
          opts.topic.resumePublishing(ORDERING_KEY); // an ordered key pauses after a failure
          throw err;
        }
        await saveRelayCursor(client, prev);
      }
      return batch.more ? "more" : batch.held ? "held" : "idle";
    },
  });
  return {
    start: () => loop.start(),
    wake: () => loop.wake(),
    setSweep: (ms) => loop.setSweep(ms),
    get leader() {
      return leader;
    },
    close: () => loop.close(),
  };
}

function publish(topic: Topic, event: LoggedEvent, prev: Cursor): Promise<string> {
  const attributes: Record<string, string> = {
    cursor: formatCursor(event.cursor),
    prev: formatCursor(prev),
    type: event.type,
  };
  if (event.repo !== null) attributes["repo"] = event.repo;
  return topic.publishMessage({
    data: Buffer.from(JSON.stringify(event.envelope)),
    orderingKey: ORDERING_KEY,
    attributes,
  });
}

/** The event a relay message carries, or undefined for a message that is not one. */
export function eventOfMessage(
  m: Pick<Message, "data" | "attributes">,
): { event: LoggedEvent; prev: Cursor | undefined } | undefined {
  const cursor = parseCursor(m.attributes["cursor"] ?? "");
  if (!cursor) return undefined;
  let envelope: CloudEvent;
  try {
    envelope = JSON.parse(m.data.toString("utf8")) as CloudEvent;
  } catch {
    return undefined;
  }
  return {
    event: { cursor, repo: m.attributes["repo"] ?? null, type: envelope.type, envelope },
    prev: parseCursor(m.attributes["prev"] ?? ""),
  };
}

export interface PubsubFeedOptions {
  pubsub: PubSub;
  topic: string;
  /** A fixed subscription; unset: one per instance, created at start and deleted at close. */
  subscription?: string | undefined;
  pool: pg.Pool;
  databaseUrl: DatabaseTarget;
  log: Logger;
  sweepMs: number;
  /** Run the relay in this process (default true; every instance competes, one leads). */
  relay?: boolean;
}

/**
 * The cloud feed of a hub: this instance's subscription, in order. A message at or before the
 * hub's head is a redelivery and is dropped; a message whose `prev` is after the head means
 * messages went missing, and the hub reads those events from the log first, so a client sees
 * every event once, in order, whatever Pub/Sub redelivers or loses.
 */
export function pubsubFeed(
  opts: PubsubFeedOptions,
): EventFeed & { readonly subscriptionName: string | undefined } {
  let subscription: Subscription | undefined;
  let ephemeral = false;
  let head: Cursor | undefined;
  let chain: Promise<void> = Promise.resolve();
  let relay: Relay | undefined;
  let closed = false;

  async function handle(m: Message, sink: (events: LoggedEvent[]) => Promise<void>): Promise<void> {
    const parsed = eventOfMessage(m);
    if (!parsed || closed) {
      m.ack();
      return;
    }
    const { event, prev } = parsed;
    // start() sets the head before it subscribes, so no message arrives without one.
    if (head === undefined)
      throw new Error("event feed: a Pub/Sub message arrived before the feed had a head");
    if (!after(event.cursor, head)) {
      m.ack();
      return;
    }
    if (prev !== undefined && after(prev, head)) {
      // Missed messages: fill (head, prev] from the log.
      for (;;) {
        const page = await readRange(opts.pool, head, prev, { repo: null, types: null }, READ_BATCH);
        const last = page.at(-1);
        if (last !== undefined) {
          await sink(page);
          head = last.cursor;
        }
        if (page.length < READ_BATCH) break;
      }
    }
    await sink([event]);
    head = event.cursor;
    m.ack();
  }

  return {
    get subscriptionName() {
      return subscription?.name;
    },
    async start(sink) {
      const topic = opts.pubsub.topic(opts.topic, { messageOrdering: true });
      await topic.get({ autoCreate: true });
      const name = opts.subscription ?? `${opts.topic}-sse-${randomBytes(6).toString("hex")}`;
      ephemeral = opts.subscription === undefined;
      subscription = topic.subscription(name, { flowControl: { maxMessages: 1000 } });
      const [exists] = await subscription.exists();
      if (!exists) {
        await topic.createSubscription(name, {
          enableMessageOrdering: true,
          ackDeadlineSeconds: 30,
          // An instance that dies without deleting its subscription leaves it to expire.
          expirationPolicy: { ttl: { seconds: 24 * 3600 } },
        });
      }
      head = await logHead(opts.pool);
      subscription.on("message", (m: Message) => {
        chain = chain
          .then(() => handle(m, sink))
          .catch((err) => {
            opts.log.warn({ err }, "event feed: a Pub/Sub message could not be handled");
            m.nack();
          });
      });
      subscription.on("error", (err) => opts.log.warn({ err }, "event feed: Pub/Sub subscription error"));
      if (opts.relay !== false) {
        relay = createRelay({ databaseUrl: opts.databaseUrl, topic, log: opts.log, sweepMs: opts.sweepMs });
        await relay.start();
      }
      return head;
    },
    setSweep: (ms) => relay?.setSweep(ms),
    wake: () => relay?.wake(),
    get relaying() {
      return relay?.leader ?? false;
    },
    async close() {
      closed = true;
      await relay?.close();
      if (subscription) {
        await subscription.close().catch(() => {});
        await chain.catch(() => {});
        if (ephemeral) await subscription.delete().catch(() => {});
      }
      await opts.pubsub.close().catch(() => {});
    },
  };
}
