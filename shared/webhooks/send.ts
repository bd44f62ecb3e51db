import { createHmac } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { parseWebhookUrl, type ResolvedAddress, type Resolver, vetTarget, WebhookUrlError } from "./guard.ts";

/** The spec's per-attempt limit: a receiver has 10 seconds to answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** An events row, as the outbox reads it back. */
export interface EventRow {
  id: string;
  type: string;
  source: string;
  time: Date;
  data: Record<string, unknown>;
}

/**
 * The CloudEvents envelope of an event, as the exact bytes that are sent and signed. Built only
 * from the events row, so every attempt (and every redelivery after a crash) of one event carries
 * the same id and the same body.
 */
export function envelopeBody(event: EventRow): Buffer {
  return Buffer.from(
    JSON.stringify({
      specversion: "1.0",
      type: event.type,
      source: event.source,
      id: event.id,
      time: event.time.toISOString(),
      datacontenttype: "application/json",
      data: event.data,
    }),
  );
}

/** `sha256=<hex HMAC-SHA256(secret, body)>`, the X-Svc-Signature value. */
export function signature(secret: string, body: Buffer): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/**
 * What one attempt came to: `ok` only for a 2xx answer, so always with the receiver's status;
 * a failure has the status when the receiver answered (null otherwise) and says why it failed.
 */
export type AttemptOutcome =
  | { ok: true; status: number; error: null }
  | { ok: false; status: number | null; error: string };

export interface SendOptions {
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
  /** Keep-alive agents; a socket is only ever connected to an address that was vetted. */
  agents?: { http: http.Agent; https: https.Agent };
  /** Abandons the attempt (the deliverer is stopping). */
  signal?: AbortSignal | undefined;
}

/** Connects to the vetted addresses only, whatever the name resolves to by the time of connecting. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  const [first] = addresses;
  // vetTarget refuses a host that resolves to nothing.
  if (first === undefined) throw new Error("a webhook request needs at least one vetted address");
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  }) as LookupFunction;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One delivery attempt: POST the envelope with `Content-Type: application/cloudevents+json` and,
 * when `secret` is non-empty, `X-Svc-Signature`. The host is resolved and vetted now (the SSRF
 * guard), and the connection goes to exactly the vetted addresses, so a name that changes its
 * answer between the check and the connect (DNS rebinding) cannot redirect it; the Host header and
 * TLS SNI keep the original name. Redirects are not followed (a 3xx is a failure). The whole
 * attempt, from lookup to the end of the answer, has `timeoutMs`.
 */
export async function sendWebhook(
  target: { url: string; secret: string | null },
  body: Buffer,
  opts: SendOptions,
): Promise<AttemptOutcome> {
  const limit = attemptLimit(opts.timeoutMs, opts.signal);
  try {
    return await attempt(target, body, opts, limit);
  } finally {
    limit.release();
  }
}

/**
 * The signal of one attempt: aborted at `timeoutMs` or when `stop` aborts. Released as soon as the
 * attempt settles, so nothing of a finished attempt waits for its timer: with
 * `AbortSignal.timeout`, every delivery's signal, listeners and what they held stayed alive for the
 * whole 10 s, and a backlog of 5,000 deliveries held 30 MiB of them (docs/benchmarks.md).
 */
function attemptLimit(timeoutMs: number, stop: AbortSignal | undefined) {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  timer.unref(); // an attempt in flight does not keep a stopping process alive
  const onStop = () => controller.abort();
  stop?.addEventListener("abort", onStop, { once: true });
  if (stop?.aborted) controller.abort();
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    release() {
      clearTimeout(timer);
      stop?.removeEventListener("abort", onStop);
    },
  };
}

type AttemptLimit = ReturnType<typeof attemptLimit>;

async function attempt(
  target: { url: string; secret: string | null },
  body: Buffer,
  opts: SendOptions,
  limit: AttemptLimit,
): Promise<AttemptOutcome> {
  const { signal } = limit;
  let addresses: ResolvedAddress[];
  let parsed: ReturnType<typeof parseWebhookUrl>;
  try {
    parsed = parseWebhookUrl(target.url);
    addresses = await Promise.race([
      vetTarget(parsed, opts),
      new Promise<never>((_, reject) =>
        signal.addEventListener("abort", () => reject(new Error(`timed out after ${opts.timeoutMs} ms`)), {
          once: true,
        }),
      ),
    ]);
  } catch (err) {
    const message = err instanceof WebhookUrlError ? `refused: ${err.message}` : (err as Error).message;
    return { ok: false, status: null, error: message };
  }
  const headers: Record<string, string> = {
    "content-type": "application/cloudevents+json",
    "content-length": String(body.length),
    "user-agent": "Quire-Webhooks/1",
  };
  if (target.secret) headers["x-svc-signature"] = signature(target.secret, body);
  const secure = parsed.url.protocol === "https:";
  const request = secure ? https.request : http.request;
  const agent = opts.agents ? (secure ? opts.agents.https : opts.agents.http) : undefined;
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const req = request(
      {
        protocol: parsed.url.protocol,
        hostname: parsed.host,
        port: parsed.url.port === "" ? undefined : Number(parsed.url.port),
        path: `${parsed.url.pathname}${parsed.url.search}`,
        method: "POST",
        headers,
        lookup: pinnedLookup(addresses),
        signal,
        ...(agent ? { agent } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) res.destroy(); // the status is all that counts
        });
        const done = () => {
          if (status >= 200 && status <= 299) settle({ ok: true, status, error: null });
          else if (status >= 300 && status <= 399) {
            const location = String(res.headers.location ?? "").slice(0, 200);
            settle({
              ok: false,
              status,
              error: `HTTP ${status}: redirect${location ? ` to ${location}` : ""} not followed`,
            });
          } else settle({ ok: false, status, error: `HTTP ${status}` });
        };
        res.on("end", done);
        res.on("close", done);
        res.on("error", done);
      },
    );
    req.on("error", (err) => {
      settle({
        ok: false,
        status: null,
        error: limit.timedOut()
          ? `timed out after ${opts.timeoutMs} ms`
          : `${(err as { code?: string }).code ?? err.message}`,
      });
    });
    req.end(body);
  });
}
