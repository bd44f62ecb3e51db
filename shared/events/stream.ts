import { Readable } from "node:stream";
import type { Actor } from "../auth/actor.ts";
import { after, type Cursor, formatCursor } from "./cursor.ts";
import type { Filter, LoggedEvent } from "./log.ts";

/** One SSE message carrying an event: its cursor as `id:`, its envelope as `data:`. */
export function eventMessage(event: LoggedEvent): string {
  return `id: ${formatCursor(event.cursor)}\ndata: ${JSON.stringify(event.envelope)}\n\n`;
}

/** A named SSE message that is not an event (`gap`, `closed`); it carries no `id:`. */
export function noticeMessage(name: string, data: Record<string, unknown>): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const KEEPALIVE = ": keepalive\n\n";

/** The last thing a stream gets when its server shuts down: the client should reconnect (with Last-Event-ID). */
export const SHUTDOWN = ": server shutting down; reconnect with Last-Event-ID\n\n";

let nextId = 1;

/**
 * One connected SSE client. Its stream is the reply body; ending it ends the response, and the
 * response closing (client gone, server closing) destroys it, which unregisters the client.
 * Every event passes through `offer`: it is sent only when it matches the client's filter and
 * comes after the last event sent, so replayed and live events never repeat or go backwards.
 */
export class Subscriber {
  readonly id = nextId++;
  readonly stream: Readable;
  /** Events arriving live while the client still replays the log; sent when the replay ends. */
  private buffer: LoggedEvent[] | undefined;
  private ended = false;
  readonly types: ReadonlySet<string> | null;
  readonly actor: Actor;
  /** repo: a repo stream (reader access re-checked while open); global: the admin stream. */
  readonly scope: "repo" | "global";
  readonly filter: Filter;
  /** The last event sent, or where the client starts. */
  lastSent: Cursor;
  private readonly maxBufferedBytes: number;
  private readonly onEnd: (s: Subscriber) => void;
  /** For a new client: whether an event's transaction ended before it connected (log.ts, logNow). */
  private readonly endedBefore: ((txid: bigint) => boolean) | undefined;

  constructor(
    actor: Actor,
    scope: "repo" | "global",
    filter: Filter,
    lastSent: Cursor,
    maxBufferedBytes: number,
    onEnd: (s: Subscriber) => void,
    endedBefore?: (txid: bigint) => boolean,
  ) {
    this.actor = actor;
    this.scope = scope;
    this.filter = filter;
    this.lastSent = lastSent;
    this.maxBufferedBytes = maxBufferedBytes;
    this.onEnd = onEnd;
    this.endedBefore = endedBefore;
    this.types = filter.types ? new Set(filter.types) : null;
    this.stream = new Readable({ read() {} });
    this.stream.once("close", () => this.finish());
  }

  matches(event: LoggedEvent): boolean {
    if (this.filter.repo !== null && event.repo !== this.filter.repo) return false;
    return this.types === null || this.types.has(event.type);
  }

  /** Holds live events back until `goLive` (a replay is running). */
  holdLive(): void {
    this.buffer ??= [];
  }

  get replaying(): boolean {
    return this.buffer !== undefined;
  }

  offer(event: LoggedEvent): void {
    if (this.ended || !this.matches(event)) return;
    if (this.buffer) this.buffer.push(event);
    else this.send(event);
  }

  /** Sends an event now (replay, or live): only one after the last sent, and none from before it connected. */
  send(event: LoggedEvent): void {
    if (this.ended || !after(event.cursor, this.lastSent) || this.endedBefore?.(event.cursor.txid)) return;
    this.lastSent = event.cursor;
    this.write(eventMessage(event));
  }

  /** Ends the replay: the live events held meanwhile, then live delivery. */
  goLive(): void {
    const held = this.buffer ?? [];
    this.buffer = undefined;
    for (const event of held) this.send(event);
  }

  write(text: string): void {
    if (this.ended) return;
    this.stream.push(text);
    // A client that does not read: drop it rather than buffer without bound. It can reconnect
    // with Last-Event-ID and resume from the log.
    if (this.stream.readableLength > this.maxBufferedBytes) {
      this.stream.destroy();
      this.finish();
    }
  }

  /** Ends the stream after what was written (optionally with a last notice). */
  end(notice?: { name: string; data: Record<string, unknown> }): void {
    if (this.ended) return;
    if (notice) this.write(noticeMessage(notice.name, notice.data));
    this.stream.push(null);
    this.finish();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private unregistered = false;

  private finish(): void {
    this.ended = true;
    this.buffer = undefined;
    if (this.unregistered) return;
    this.unregistered = true;
    this.onEnd(this);
  }
}
