import type pg from "pg";
import { atLeast, findRepoAccess } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import { endedSessions } from "../auth/sessions.ts";
import { type Clock, systemClock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { after, type Cursor, formatCursor, maxCursor } from "./cursor.ts";
import type { EventFeed } from "./feed.ts";
import { deleteExpiredEvents, type Filter, type LoggedEvent, logNow, readRange, resumeState } from "./log.ts";
import { KEEPALIVE, noticeMessage, SHUTDOWN, Subscriber } from "./stream.ts";

export interface HubOptions {
  /** `: keepalive` comment interval (spec: 15 s). */
  keepaliveMs: number;
  /** How often every repo stream's access is re-checked (org membership changes emit no event). */
  recheckMs: number;
  /**
   * How often the streams opened with a session cookie check that their session still lives
   * (signed out, revoked, idle, expired: the stream ends). One query per interval for all of them.
   */
  sessionCheckMs: number;
  /** Sweep of the log when no notification came (a lost NOTIFY only delays). */
  sweepMs: number;
  /** How often events past retention are deleted. */
  cleanupMs: number;
  /** Events are kept this many days (SVC_EVENT_RETENTION_DAYS). */
  retentionDays: number;
  /** A client whose unread output grows past this is disconnected (it may resume with Last-Event-ID). */
  maxBufferedBytes: number;
}

export const defaultHubOptions: HubOptions = {
  keepaliveMs: 15_000,
  recheckMs: 30_000,
  sessionCheckMs: 3_000,
  sweepMs: 1_000,
  cleanupMs: 60 * 60_000,
  retentionDays: 7,
  maxBufferedBytes: 4 * 1024 * 1024,
};

export interface StreamRequest {
  actor: Actor;
  /** `repo`: a repo's stream (the caller's read access already checked); `global`: the admin stream. */
  scope: "repo" | "global";
  filter: Filter;
  /** Last-Event-ID: resume strictly after this event. */
  resumeAfter?: Cursor | undefined;
}

/** Process-wide SSE fan-out. See docs/events.md, "Event streams (SSE)". */
export interface EventHub {
  /** Starts the feed and the timers (opening a stream starts the hub too). */
  start(): Promise<void>;
  /** Registers a client and returns its SSE body. */
  open(request: StreamRequest): Promise<import("node:stream").Readable>;
  /** Tunes intervals at run time (tests). */
  tune(options: Partial<HubOptions>): void;
  /** Connected clients. */
  readonly clients: number;
  /** The cursor of the last event fanned out (or where the hub started). */
  readonly head: Cursor | undefined;
  /** Deletes events past retention now; returns how many. */
  cleanup(): Promise<number>;
  /** Re-checks every repo stream's access now. */
  recheck(): Promise<void>;
  /** Ends now every stream whose session has ended. */
  checkSessions(): Promise<void>;
  /** Reads the feed at once. */
  wake(): void;
  /** This process relays the log to Pub/Sub now (SVC_EVENT_FANOUT=pubsub; one instance at a time). */
  readonly relaying: boolean;
  /** Ends every stream, each with a last comment asking its client to reconnect, and stops. */
  close(): Promise<void>;
}

const REPLAY_PAGE = 500;
const ROLE_CHANGED = "com.svc.role.changed";
const REPO_DELETED = "com.svc.repo.deleted";

export function createEventHub(deps: {
  pool: pg.Pool;
  log: Logger;
  feed: EventFeed;
  options?: Partial<HubOptions>;
  /** What "now" is for a session's idle and absolute limits (the context's clock). */
  clock?: Clock;
}): EventHub {
  const { pool, log, feed } = deps;
  const clock = deps.clock ?? systemClock;
  const options: HubOptions = { ...defaultHubOptions, ...deps.options };
  const subscribers = new Set<Subscriber>();
  const byRepo = new Map<string, Set<Subscriber>>(); // repo streams and repo-filtered global streams
  const unfiltered = new Set<Subscriber>(); // global streams without a repo filter
  let head: Cursor | undefined;
  let starting: Promise<void> | undefined;
  let closed = false;
  const timers: Record<"keepalive" | "recheck" | "sessions" | "cleanup", NodeJS.Timeout | undefined> = {
    keepalive: undefined,
    recheck: undefined,
    sessions: undefined,
    cleanup: undefined,
  };

  function arm(name: keyof typeof timers, ms: number, fn: () => void): void {
    clearInterval(timers[name]);
    if (closed) return;
    timers[name] = setInterval(fn, ms);
    timers[name].unref();
  }

  function armAll(): void {
    arm("keepalive", options.keepaliveMs, () => {
      for (const s of subscribers) if (!s.replaying) s.write(KEEPALIVE);
    });
    arm("recheck", options.recheckMs, () => void recheck());
    arm("sessions", options.sessionCheckMs, () => void checkSessions());
    arm("cleanup", options.cleanupMs, () => void cleanup());
  }

  function register(s: Subscriber): void {
    subscribers.add(s);
    if (s.filter.repo === null) unfiltered.add(s);
    else {
      const set = byRepo.get(s.filter.repo) ?? new Set<Subscriber>();
      byRepo.set(s.filter.repo, set);
      set.add(s);
    }
  }

  function unregister(s: Subscriber): void {
    subscribers.delete(s);
    unfiltered.delete(s);
    if (s.filter.repo !== null) {
      const set = byRepo.get(s.filter.repo);
      set?.delete(s);
      if (set?.size === 0) byRepo.delete(s.filter.repo);
    }
  }

  /** Ends the repo streams of `repo` (of `identity` only, when given) whose caller may no longer read it. */
  async function recheckRepo(repo: string, identity?: string): Promise<void> {
    const streams = [...(byRepo.get(repo) ?? [])].filter(
      (s) => s.scope === "repo" && (identity === undefined || s.actor.identity.toLowerCase() === identity),
    );
    const verdicts = new Map<string, Promise<boolean>>();
    for (const s of streams) {
      const key = s.actor.identity;
      let verdict = verdicts.get(key);
      if (verdict === undefined) {
        verdict = findRepoAccess(pool, repo, s.actor).then((a) => a !== null && atLeast(a.role, "reader"));
        verdicts.set(key, verdict);
      }
      if (!(await verdict)) {
        s.end({ name: "closed", data: { reason: "access revoked", repo } });
        log.info({ repo, identity: s.actor.identity, stream: s.id }, "event stream closed: access revoked");
      }
    }
  }

  async function recheck(): Promise<void> {
    try {
      for (const repo of [...byRepo.keys()]) await recheckRepo(repo);
    } catch (err) {
      log.warn({ err }, "event stream access re-check failed; trying again later");
    }
  }

  /**
   * Ends the streams whose session cookie's session has ended. The sessions table is the truth
   * every instance shares, so a sign-out on one instance ends the streams of every other.
   */
  async function checkSessions(): Promise<void> {
    const bySession = new Map<string, Subscriber[]>();
    for (const s of subscribers) {
      const hash = s.actor.session?.idHash.toString("hex");
      if (hash !== undefined) bySession.set(hash, [...(bySession.get(hash) ?? []), s]);
    }
    if (bySession.size === 0) return;
    try {
      for (const hash of await endedSessions(pool, [...bySession.keys()], clock.now()))
        for (const s of bySession.get(hash) ?? []) {
          s.end({ name: "closed", data: { reason: "session ended" } });
          log.info({ identity: s.actor.identity, stream: s.id }, "event stream closed: session ended");
        }
    } catch (err) {
      log.warn({ err }, "event stream session check failed; trying again later");
    }
  }

  async function cleanup(): Promise<number> {
    try {
      const deleted = await deleteExpiredEvents(pool, options.retentionDays);
      if (deleted > 0) log.info({ deleted, retention_days: options.retentionDays }, "expired events deleted");
      return deleted;
    } catch (err) {
      log.warn({ err }, "deleting expired events failed; trying again later");
      return 0;
    }
  }

  /** Fans a batch out, in order. The head moves with each event, so a stream opened meanwhile neither misses nor repeats one. */
  async function fanOut(events: LoggedEvent[]): Promise<void> {
    for (const event of events) {
      if (head !== undefined && !after(event.cursor, head)) continue; // delivered already (Pub/Sub redelivery)
      if (event.repo !== null) {
        if (event.type === ROLE_CHANGED) {
          // Before delivering it: a client whose role this removed must not receive it, nor anything after.
          const identity = String(
            (event.envelope.data as { identity?: unknown }).identity ?? "",
          ).toLowerCase();
          await recheckRepo(event.repo, identity).catch((err) =>
            log.warn({ err }, "event stream access re-check failed"),
          );
        }
        for (const s of byRepo.get(event.repo) ?? []) s.offer(event);
      }
      for (const s of unfiltered) s.offer(event);
      head = event.cursor;
      if (event.type === REPO_DELETED && event.repo !== null) {
        for (const s of [...(byRepo.get(event.repo) ?? [])])
          if (s.scope === "repo")
            s.end({ name: "closed", data: { reason: "repo deleted", repo: event.repo } });
      }
    }
  }

  /** Sends a resuming client what it missed, then switches it to live events without a gap or a repeat. */
  async function replay(s: Subscriber, from: Cursor, to: Cursor): Promise<void> {
    try {
      const state = await resumeState(pool, from, options.retentionDays);
      if (state !== "kept") {
        s.write(
          noticeMessage("gap", {
            last_event_id: formatCursor(from),
            reason:
              state === "missing"
                ? "the event log no longer has this event: events after it may have been deleted (retention) and are not replayed"
                : `this event is older than the ${options.retentionDays}-day retention: events after it may have been deleted`,
            retention_days: options.retentionDays,
          }),
        );
        // An id this log never reached (another database, a made-up id): resume from now.
        if (state === "missing" && after(from, to)) s.lastSent = to;
      }
      let cursor = s.lastSent;
      while (!s.isEnded) {
        const page = await readRange(pool, cursor, to, s.filter, REPLAY_PAGE);
        for (const event of page) s.send(event);
        const last = page.at(-1);
        if (last === undefined || page.length < REPLAY_PAGE) break;
        cursor = last.cursor;
      }
      s.goLive();
    } catch (err) {
      log.warn({ err, stream: s.id }, "event stream replay failed; closing the stream");
      s.end();
    }
  }

  /** The head, which start() sets before it resolves. */
  function startedHead(): Cursor {
    if (head === undefined) throw new Error("the event hub has no head: it has not started");
    return head;
  }

  async function start(): Promise<void> {
    if (closed) throw new Error("the event hub is closed");
    starting ??= (async () => {
      const first = await feed.start(fanOut);
      // The feed may already have handed events over while starting: keep the later cursor.
      head = head === undefined ? first : maxCursor(first, head);
      armAll();
    })();
    return starting;
  }

  return {
    start,
    async open(request) {
      await start();
      const from = request.resumeAfter;
      // A new client starts at the later of the hub's head and the log's horizon now, and is sent
      // no event of a transaction that had ended when it connected (the horizon alone lags behind
      // while any long transaction runs); every transaction still running may commit later and is sent.
      let startAt = from;
      let endedBefore: ((txid: bigint) => boolean) | undefined;
      if (startAt === undefined) {
        const now = await logNow(pool);
        startAt = maxCursor(startedHead(), now.horizon);
        endedBefore = now.endedBefore;
      }
      const s = new Subscriber(
        request.actor,
        request.scope,
        request.filter,
        startAt,
        options.maxBufferedBytes,
        unregister,
        endedBefore,
      );
      register(s);
      s.write(": ok\n\n");
      if (from !== undefined) {
        s.holdLive();
        void replay(s, from, startedHead());
      }
      return s.stream;
    },
    tune(changes) {
      Object.assign(options, changes);
      if (changes.sweepMs !== undefined) feed.setSweep(changes.sweepMs);
      if (starting) armAll();
    },
    get clients() {
      return subscribers.size;
    },
    get head() {
      return head;
    },
    cleanup,
    recheck,
    checkSessions,
    wake: () => feed.wake(),
    get relaying() {
      return feed.relaying;
    },
    async close() {
      closed = true;
      for (const t of Object.values(timers)) clearInterval(t);
      for (const s of [...subscribers]) {
        s.write(SHUTDOWN);
        s.end();
      }
      await feed.close();
    },
  };
}
