import type { IncomingHttpHeaders } from "node:http";
import { z } from "zod";
import { fail } from "../../shared/errors.ts";
import { type Cursor, parseCursor } from "../../shared/events/cursor.ts";
import { eventTypes, isEventType } from "../../shared/events/types.ts";
import { bytes } from "../../shared/http/responses.ts";
import { type Reply, route } from "../../shared/http/route.ts";

/** Headers of an SSE reply: no caching, and no buffering by a proxy in front (nginx honours X-Accel-Buffering). */
const sseHeaders = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/** `types=a,b`: known event types, or null for all. */
function typesFilter(raw: string | undefined): string[] | null {
  if (raw === undefined) return null;
  const list = raw
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  if (list.length === 0) return null;
  const unknown = list.filter((t) => !isEventType(t));
  if (unknown.length > 0)
    fail(
      "VALIDATION_FAILED",
      `query.types: unknown event type(s) ${unknown.join(", ")}; known: ${eventTypes.join(", ")}`,
    );
  return [...new Set(list)];
}

/**
 * Where a reconnecting client resumes: the `Last-Event-ID` header (what EventSource sends), or the
 * `last_event_id` query parameter for clients that cannot set headers. Only ids this service sent.
 */
function resumeCursor(headers: IncomingHttpHeaders, query: string | undefined): Cursor | undefined {
  const header = headers["last-event-id"];
  const raw = (Array.isArray(header) ? header[0] : header)?.trim() || query?.trim() || undefined;
  if (raw === undefined) return undefined;
  const cursor = parseCursor(raw);
  if (!cursor)
    fail(
      "VALIDATION_FAILED",
      "Last-Event-ID: must be the id of an event this stream sent (<txid>.<position>)",
    );
  return cursor;
}

const streamReply = (stream: import("node:stream").Readable): Reply => ({
  status: 200,
  stream,
  headers: { ...sseHeaders },
});

export const eventRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/events",
    access: { repo: "reader" },
    summary:
      "SSE stream of the repo's events (reader or higher); query types (comma-separated), Last-Event-ID resumes",
    params: z.object({ repo: z.string() }),
    query: z.strictObject({ types: z.string().optional(), last_event_id: z.string().optional() }),
    responses: { 200: bytes("text/event-stream") },
    handler: async ({ ctx, actor, repo, query, headers }) => {
      const types = typesFilter(query.types);
      const resumeAfter = resumeCursor(headers, query.last_event_id);
      const stream = await ctx.events.open({
        actor: actor,
        scope: "repo",
        filter: { repo: repo.repo.name, types },
        resumeAfter,
      });
      return streamReply(stream);
    },
  }),
  route({
    method: "GET",
    path: "/events",
    access: "user",
    summary: "SSE stream of every event (global admin only); query repo (exact name), Last-Event-ID resumes",
    query: z.strictObject({ repo: z.string().min(1).optional(), last_event_id: z.string().optional() }),
    responses: { 200: bytes("text/event-stream") },
    handler: async ({ ctx, actor, query, headers }) => {
      if (!actor.globalAdmin) fail("FORBIDDEN", "the global event stream is for global admins");
      const resumeAfter = resumeCursor(headers, query.last_event_id);
      const stream = await ctx.events.open({
        actor: actor,
        scope: "global",
        filter: { repo: query.repo ?? null, types: null },
        resumeAfter,
      });
      return streamReply(stream);
    },
  }),
];
