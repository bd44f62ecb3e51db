import type { IncomingHttpHeaders } from "node:http";
import { DomainError, fail } from "../errors.ts";
import type { Reply } from "./route.ts";

/**
 * Conditional requests (RFC 9110 section 13) on writes. A branch's entity tag is its head
 * sequence in quotes, `"42"`: `GET branch` and `GET tree` (without `at`) send it as `ETag`, and a
 * commit honours `If-Match` against it. Every other precondition on a write is refused with 400,
 * never ignored, so a client relying on one learns at once that it does not hold (docs/api.md).
 */

/** What an `If-Match` header asks: `*` (the branch exists), or one of these strong tags. */
export type IfMatch = { any: true } | { any: false; tags: string[] };

/** The entity tag of a branch whose head is `sequence`. */
export const branchTag = (sequence: number): string => `"${sequence}"`;

/** `reply` with the `ETag` of a branch whose head is `head`. */
export function withBranchTag(reply: Reply, head: number): Reply {
  return { ...reply, headers: { ...reply.headers, etag: branchTag(head) } };
}

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc is any visible character but DQUOTE.
const entityTag = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/** The `If-Match` of a request, undefined when absent; 400 when it is not `*` or entity tags. */
export function parseIfMatch(headers: IncomingHttpHeaders): IfMatch | undefined {
  const raw = headers["if-match"];
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value === "*") return { any: true };
  const tags = value
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  if (tags.length === 0 || !tags.every((t) => entityTag.test(t)))
    fail(
      "VALIDATION_FAILED",
      `header If-Match: must be * or entity tags such as "42", got '${value.slice(0, 80)}'`,
    );
  return { any: false, tags };
}

/**
 * Refuses with 412 PRECONDITION_FAILED, with the branch's `head_sequence`, unless `ifMatch` holds
 * for a branch whose head is `head`. Comparison is strong, as RFC 9110 requires for If-Match: a
 * weak tag (`W/"42"`) never matches.
 */
export function requireIfMatch(ifMatch: IfMatch | undefined, branch: string, head: number): void {
  if (ifMatch === undefined || ifMatch.any || ifMatch.tags.includes(branchTag(head))) return;
  throw new DomainError(
    "PRECONDITION_FAILED",
    `If-Match: branch '${branch}' is at ${branchTag(head)}, which matches none of ${ifMatch.tags.join(", ")}`,
    { details: { head_sequence: head } },
  );
}

/** The preconditions Quire does not evaluate on writes. */
const UNSUPPORTED = ["if-none-match", "if-unmodified-since", "if-modified-since", "if-range"] as const;

/**
 * On a write, refuses with 400 a precondition the route does not evaluate: `If-Match` except on a
 * route that honours it, and `If-None-Match`, `If-Unmodified-Since`, `If-Modified-Since` and
 * `If-Range` everywhere. Reads are left alone: a GET that ignores a precondition answers 200 with
 * the full representation, which is what HTTP allows.
 */
export function refuseUnevaluatedPreconditions(
  method: string,
  headers: IncomingHttpHeaders,
  honoursIfMatch: boolean,
): void {
  if (method === "GET" || method === "HEAD") return;
  const unsupported = UNSUPPORTED.find((h) => headers[h] !== undefined);
  const name = unsupported ?? (!honoursIfMatch && headers["if-match"] !== undefined ? "if-match" : undefined);
  if (name === undefined) return;
  fail(
    "VALIDATION_FAILED",
    `header ${headerName(name)}: not supported on this request, and refused rather than ignored; only a commit takes If-Match (docs/api.md)`,
  );
}

const headerName = (h: string) =>
  h.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
