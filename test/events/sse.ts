import http from "node:http";
import { afterAll, expect } from "vitest";
import type { CloudEvent } from "../../shared/events/record.ts";
import type { TestApp } from "../support/app.ts";

/** One SSE message as received: its fields, or a comment line. */
export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
  /** When it arrived (performance.now()). */
  at: number;
}

export interface ReceivedEvent {
  id: string;
  envelope: CloudEvent;
  at: number;
}

/** A test SSE client over plain node:http, so it can see comments, headers and the end of the stream. */
export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body of a non-200 answer, parsed. */
  body: unknown;
  messages: SseMessage[];
  /** The event messages (no `event:` name), parsed. */
  events(): ReceivedEvent[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  /** Waits until `predicate` holds over the messages so far. */
  until(predicate: (c: SseClient) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Waits until at least `n` events arrived; returns them. */
  waitForEvents(n: number, timeoutMs?: number): Promise<ReceivedEvent[]>;
  close(): void;
}

export async function openSse(
  base: string,
  path: string,
  opts: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<SseClient> {
  const headers: Record<string, string> = { accept: "text/event-stream", ...opts.headers };
  if (opts.token) headers["authorization"] = `Bearer ${opts.token}`;
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      const messages: SseMessage[] = [];
      let ended = false;
      let endResolve!: () => void;
      const endedP = new Promise<void>((r) => (endResolve = r));
      const waiters = new Set<() => void>();
      const notify = () => {
        for (const w of [...waiters]) w();
      };
      const finish = () => {
        if (ended) return;
        ended = true;
        endResolve();
        notify();
      };
      res.on("end", finish);
      res.on("close", finish);
      res.on("error", finish);
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: undefined,
        messages,
        events: () =>
          messages
            .filter((m) => m.data !== undefined && m.event === undefined)
            .map((m) => ({ id: m.id!, envelope: JSON.parse(m.data!), at: m.at })),
        ended: endedP,
        isEnded: () => ended,
        until(predicate, timeoutMs = 10_000, what = "condition") {
          if (predicate(client)) return Promise.resolve();
          return new Promise((ok, fail) => {
            const check = () => {
              if (predicate(client)) {
                cleanup();
                ok();
              } else if (ended) {
                cleanup();
                fail(new Error(`stream ended before ${what}; got ${JSON.stringify(messages)}`));
              }
            };
            const timer = setTimeout(() => {
              cleanup();
              fail(new Error(`timed out waiting for ${what}; got ${JSON.stringify(messages)}`));
            }, timeoutMs);
            const cleanup = () => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
          });
        },
        async waitForEvents(n, timeoutMs) {
          await client.until((c) => c.events().length >= n, timeoutMs, `${n} events`);
          return client.events();
        },
        close: () => req.destroy(),
      };
      if (res.statusCode !== 200) {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => {
          client.body = text === "" ? undefined : JSON.parse(text);
          resolve(client);
        });
        return;
      }
      let pending = "";
      let current: Omit<SseMessage, "at"> = {};
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        pending += chunk;
        let nl = pending.indexOf("\n");
        while (nl >= 0) {
          const line = pending.slice(0, nl).replace(/\r$/, "");
          pending = pending.slice(nl + 1);
          if (line === "") {
            if (Object.keys(current).length > 0) messages.push({ ...current, at: performance.now() });
            current = {};
          } else if (line.startsWith(":")) {
            messages.push({ comment: line.slice(1).trim(), at: performance.now() });
          } else {
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "data")
              current.data = current.data === undefined ? value : `${current.data}\n${value}`;
            else if (field === "id" || field === "event") current[field] = value;
          }
          nl = pending.indexOf("\n");
        }
        notify();
      });
      resolve(client);
    });
    req.on("error", reject);
  });
}

/** Opens a stream on `app` as `email` (null: anonymous). */
export async function sse(
  app: TestApp,
  path: string,
  email: string | null,
  headers?: Record<string, string>,
): Promise<SseClient> {
  const token = email === null ? null : await app.idp.token(email);
  return openSse(app.url, path, { token, ...(headers ? { headers } : {}) });
}

/**
 * Keeps the streams a test file opens and closes them after its tests. Call it after the file's
 * `useFixture` lines, so the streams close before the app does; it returns `track(stream)`.
 */
export function streamsClosedAfterAll(): (s: SseClient) => SseClient {
  const open: SseClient[] = [];
  afterAll(() => {
    for (const s of open) s.close();
  });
  return (s) => {
    open.push(s);
    return s;
  };
}

/**
 * `stream(path, email, headers)` on `app`, each stream closed after the file's tests (see
 * `streamsClosedAfterAll`); with `ok`, a stream that does not open with 200 fails the test.
 */
export function streams(app: TestApp, opts: { ok?: boolean } = {}) {
  const track = streamsClosedAfterAll();
  return async (path: string, email: string | null, headers?: Record<string, string>) => {
    const s = track(await sse(app, path, email, headers));
    if (opts.ok) expect(s.status).toBe(200);
    return s;
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The commit events of a stream. A stream may also carry an event committed an instant before it
 * opened (while another transaction held the log's horizon back); tests that expect exact lists
 * look at the events their own mutations made after opening.
 */
export const commitEvents = (s: SseClient) =>
  s.events().filter((e) => e.envelope.type === "com.svc.commit.created");
