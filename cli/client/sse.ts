/*
 * Server-sent events with resumption (docs/events.md): each message's `id:` is a cursor; after a
 * dropped connection the client reconnects with `Last-Event-ID` and the server sends every event
 * after it, then live ones, with no repeat and no gap. `event: gap` says the log no longer reaches
 * back that far; `event: closed` ends the stream for good (access revoked, repo deleted).
 */

/** One message of an event stream. */
export interface StreamMessage {
  /** The cursor (`<txid>.<position>`), absent on `gap` and `closed`. */
  id: string | undefined;
  /** `message` for events; `gap` or `closed` for the server's notices. */
  event: string;
  /** The parsed `data:` (the CloudEvents envelope for events). */
  data: unknown;
}

export interface FollowOptions {
  /** Opens one connection; `lastEventId` is the cursor to resume after, if any. */
  open(lastEventId: string | undefined, signal: AbortSignal): Promise<Response>;
  /** Resume after this cursor from the start. */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Called when a connection drops and another is about to be opened. */
  onReconnect?(attempt: number, lastEventId: string | undefined, cause: unknown): void;
  /** Delay before the n-th reconnect in a row, in ms (default: 0.5 s doubling to 10 s). */
  backoff?(attempt: number): number;
  /** Give up after this many failed reconnects in a row (default: no limit). */
  maxRetries?: number;
}

/** A reply that is not a stream: not worth retrying (401, 403, 404, 400). */
export class StreamRefused extends Error {
  readonly status: number;
  readonly body: string;
  constructor(status: number, body: string) {
    super(`event stream refused: ${status} ${body}`);
    this.name = "StreamRefused";
    this.status = status;
    this.body = body;
  }
}

const defaultBackoff = (attempt: number) => Math.min(10_000, 500 * 2 ** Math.max(0, attempt - 1));

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** Parses the text/event-stream bytes of one connection into messages. */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let event = "message";
  let id: string | undefined;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl = buffer.search(/\r\n|\r|\n/);
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
      nl = buffer.search(/\r\n|\r|\n/);
      if (line === "") {
        if (data.length > 0) {
          const text = data.join("\n");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          yield { id, event, data: parsed };
        }
        data = [];
        event = "message";
        id = undefined;
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id") id = value;
    }
  }
}

/**
 * Every message of a stream, across reconnects: a connection that ends or fails is opened again
 * with the last id seen, until `closed`, the signal aborts, or the server refuses (StreamRefused).
 */
export async function* follow(opts: FollowOptions): AsyncGenerator<StreamMessage, void, undefined> {
  const signal = opts.signal ?? new AbortController().signal;
  let last = opts.lastEventId;
  let attempt = 0;
  while (!signal.aborted) {
    let cause: unknown = new Error("stream ended");
    try {
      const res = await opts.open(last, signal);
      if (res.status !== 200 || !res.body) {
        const text = await res.text().catch(() => "");
        // 5xx and 429 are a server's bad moment: retry. Anything else is an answer.
        if (res.status < 500 && res.status !== 429) throw new StreamRefused(res.status, text);
        cause = new Error(`HTTP ${res.status}`);
      } else {
        for await (const message of parseEventStream(res.body)) {
          attempt = 0;
          if (message.id !== undefined) last = message.id;
          yield message;
          if (message.event === "closed") return;
        }
      }
    } catch (err) {
      if (err instanceof StreamRefused || signal.aborted) {
        if (signal.aborted) return;
        throw err;
      }
      cause = err;
    }
    attempt++;
    if (opts.maxRetries !== undefined && attempt > opts.maxRetries) throw cause;
    opts.onReconnect?.(attempt, last, cause);
    await sleep((opts.backoff ?? defaultBackoff)(attempt), signal);
  }
}
