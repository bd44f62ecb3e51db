import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { AppContext } from "../context.ts";
import { DomainError } from "../errors.ts";
import { createDispatcher, type Outcome, type RawRequest, refusalOutsideRoutes } from "./dispatch.ts";
import { JsonBytes } from "./json-bytes.ts";
import type { AnyRoute, Reply } from "./route.ts";

/** Reads a request body, refusing one larger than `limit` bytes with PAYLOAD_TOO_LARGE. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit) throw tooLarge(limit);
  // With a declared length the bytes go straight into one buffer: collecting the chunks and
  // concatenating them held a large body twice (docs/benchmarks.md, "Where the memory goes").
  const into = Number.isSafeInteger(declared) && declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let copied = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    if (into && chunks.length === 0 && copied + chunk.length <= into.length) {
      chunk.copy(into, copied);
      copied += chunk.length;
    } else chunks.push(chunk);
  }
  if (!into) return Buffer.concat(chunks);
  // Node's parser holds a body to its Content-Length; should it not, nothing is lost.
  return chunks.length === 0 && copied === into.length
    ? into
    : Buffer.concat([into.subarray(0, copied), ...chunks]);
}

function tooLarge(limit: number): DomainError {
  return new DomainError("PAYLOAD_TOO_LARGE", `the request body is larger than the limit of ${limit} bytes`);
}

/** Writes a reply: JSON for a body, piped bytes for a stream. */
export function writeReply(res: ServerResponse, reply: Reply): void {
  const cookies: OutgoingHttpHeaders = reply.cookies?.length ? { "set-cookie": reply.cookies } : {};
  if ("stream" in reply) {
    res.writeHead(reply.status, { ...reply.headers, ...cookies });
    reply.stream.on("error", () => res.destroy());
    reply.stream.pipe(res);
    // The client going away (or the server closing its connection) frees the producer. After
    // pipe(), so a stream that watches its destination itself (the archive) sees it first.
    res.once("close", () => {
      if (!reply.stream.destroyed) reply.stream.destroy();
    });
    return;
  }
  const headers: OutgoingHttpHeaders = { ...reply.headers, ...cookies };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers).end();
    return;
  }
  // A body serialized once (a cached tree page) goes out as its bytes, with no walk of its value.
  const text = reply.body instanceof JsonBytes ? reply.body.bytes : JSON.stringify(reply.body);
  headers["content-type"] = "application/json; charset=utf-8";
  headers["content-length"] = String(Buffer.byteLength(text));
  res.writeHead(reply.status, headers).end(text);
}

/** The request log line: method, path, status, duration, identity, request id. */
function logRequest(ctx: AppContext, req: IncomingMessage, outcome: Outcome, started: bigint): void {
  const fields = {
    method: req.method,
    path: (req.url ?? "").split("?")[0],
    status: outcome.reply.status,
    duration_ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
    identity: outcome.actor?.identity ?? null,
    request_id: outcome.requestId,
  };
  if (outcome.error !== undefined) ctx.log.error({ ...fields, err: outcome.error }, "request failed");
  else ctx.log.info(fields, "request");
}

/**
 * A node `(req, res)` handler for a route table. `bodyOf` supplies the raw body: the local server
 * reads the stream itself (with the body limit); the functions framework has already read it into
 * `req.rawBody`. `options.jsonOf` hands over the framework's parse of a JSON body;
 * `options.beforeReply` runs after the operation, before the reply is written (a function finishes
 * its after-commit work there, while the platform still gives it CPU).
 */
export function nodeHandler(
  ctx: AppContext,
  routes: readonly AnyRoute[],
  bodyOf: (req: IncomingMessage) => Promise<Buffer | undefined>,
  options: {
    jsonOf?: (req: IncomingMessage) => unknown;
    beforeReply?: () => Promise<void>;
  } = {},
) {
  const dispatch = createDispatcher(ctx, routes);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = process.hrtime.bigint();
    let outcome: Outcome;
    try {
      const raw: RawRequest = {
        method: req.method ?? "GET",
        url: req.url ?? "/",
        headers: req.headers,
        body: await bodyOf(req),
        json: options.jsonOf?.(req),
      };
      outcome = await dispatch(raw);
    } catch (err) {
      const domain = err instanceof DomainError ? err : new DomainError("INTERNAL", "internal error");
      outcome = {
        reply: refusalOutsideRoutes(routes, { url: req.url ?? "/", headers: req.headers }, domain, "-"),
        actor: null,
        requestId: "-",
        error: domain.status >= 500 ? err : undefined,
      };
      if (domain.code === "PAYLOAD_TOO_LARGE") res.setHeader("connection", "close");
    }
    await options.beforeReply?.();
    logRequest(ctx, req, outcome, started);
    writeReply(res, outcome.reply);
    // A streamed reply (an archive, an SSE stream) may last long after its request line: log its end too.
    if ("stream" in outcome.reply) {
      res.once("close", () =>
        ctx.log.info(
          {
            path: (req.url ?? "").split("?")[0],
            duration_ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
            completed: res.writableFinished,
            request_id: outcome.requestId,
          },
          "stream ended",
        ),
      );
    }
  };
}
