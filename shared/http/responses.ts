import { z } from "zod";
import type { AnyRoute, Reply } from "./route.ts";

/** A success reply that is not JSON: bytes of a content type (an archive, an event stream, a log). */
export interface Bytes {
  contentType: string;
}
/** A redirect: no body, a `location` header. */
export interface Redirect {
  redirect: true;
}

/**
 * What a route answers on success, by status: a zod schema of a JSON body, `bytes(type)` for a
 * streamed or non-JSON body, `redirect`, or `null` for no body (204).
 */
export type Declared = z.ZodType | Bytes | Redirect | null;
export type SuccessStatus = 200 | 201 | 202 | 204 | 302 | 303;
export type Responses = Partial<Record<SuccessStatus, Declared>>;

export const bytes = (contentType: string): Bytes => ({ contentType });
export const redirect: Redirect = { redirect: true };

const isSchema = (d: Declared): d is z.ZodType => d instanceof z.ZodType;

/**
 * Why a reply is not what its route declares, or null when it is. JSON bodies are checked as a
 * client receives them (serialized: a Date is its ISO string).
 */
export function replyDrift(route: AnyRoute, reply: Reply): string | null {
  const declared = route.responses[reply.status as SuccessStatus];
  if (declared === undefined) {
    if (reply.status >= 400) return null;
    return `status ${reply.status} is not one the route declares (${Object.keys(route.responses).join(", ")})`;
  }
  if (declared === null)
    return "stream" in reply || reply.body !== undefined ? "a body where the route declares none" : null;
  if ("redirect" in declared) return reply.headers?.["location"] ? null : "a redirect without a location";
  if (isSchema(declared)) {
    // A large JSON body is streamed (a file above 1 MiB: shared/commits/file-stream.ts); its bytes
    // are not read here, which would undo the streaming, so only its content type is checked.
    if ("stream" in reply)
      return (reply.headers["content-type"] ?? "").startsWith("application/json")
        ? null
        : "a stream that is not JSON where the route declares a JSON body";
    const parsed = declared.safeParse(JSON.parse(JSON.stringify(reply.body ?? null)));
    return parsed.success ? null : z.prettifyError(parsed.error);
  }
  const type = reply.headers?.["content-type"] ?? "";
  return type.startsWith(declared.contentType)
    ? null
    : `content type '${type}' where the route declares '${declared.contentType}'`;
}

/** Throws (a 500 whose cause the request log shows) when a reply drifts from its declaration. */
export function requireDeclaredReply(route: AnyRoute, reply: Reply): void {
  const drift = replyDrift(route, reply);
  if (drift !== null)
    throw new Error(`${route.method} ${route.path} answered what it does not declare: ${drift}`);
}

/** The wire shape of every error reply (docs/errors.md); some codes add details. */
export const errorBody = z.looseObject({
  code: z.string().meta({ description: "A code from docs/errors.md" }),
  error: z.string().meta({ description: "A message for people" }),
});
