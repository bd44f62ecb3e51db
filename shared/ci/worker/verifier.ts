import { DomainError, fail } from "../../errors.ts";
import type { Logger } from "../../log.ts";

/** The service account, and the CronJob, that CI worker pods run as and come from (SPEC Authentication 7). */
export const WORKER_NAME = "ci-worker";
/** A worker pod may claim only while younger than this. */
export const MAX_POD_AGE_MS = 4 * 60 * 60 * 1000;

/** Who claimed: recorded on the job as `claimed_by`. */
export interface WorkerIdentity {
  /** `k8s:<namespace>/<pod>` for a verified Kubernetes worker pod, or `static-token` for the local token. */
  worker: string;
}

/** Decides whether the caller of `POST /claim` is a CI worker, and which one. */
export interface WorkerVerifier {
  /**
   * Checks the bearer token of a claim (`authorization` is the raw `Authorization` header).
   * Throws DomainError UNAUTHENTICATED (401) for a missing, invalid or refused token, and
   * UNAVAILABLE (503) when the identity backend cannot be asked.
   */
  verify(authorization: string | undefined): Promise<WorkerIdentity>;
}

// The one message every refusal carries: a worker (or whoever holds its token) learns nothing about
// which check failed. The precise reason goes to the log only.
const REFUSED = "the worker credential was not accepted";

/**
 * Refuses a claim: logs `reason` (and `fields`) at warn level for operators, then throws
 * UNAUTHENTICATED with a fixed message. Never pass the token itself in `fields`.
 */
export function refuse(log: Logger, reason: string, fields: Record<string, unknown> = {}): never {
  log.warn({ ...fields, reason }, "worker claim refused");
  fail("UNAUTHENTICATED", REFUSED);
}

/**
 * Throws UNAVAILABLE (503): the identity backend could not be asked, which says nothing about the
 * worker. `reason` carries the detail; the raw error is not logged, because a client exception
 * holds the response body and headers of a call whose request carried the worker's token.
 */
export function unavailable(log: Logger, reason: string, cause: unknown): never {
  log.error({ reason }, "worker identity could not be checked");
  throw new DomainError("UNAVAILABLE", "worker identity cannot be checked right now; try again", { cause });
}

/**
 * The token of an `Authorization: Bearer <token>` header. The scheme is matched case-insensitively
 * (RFC 9110 11.1); anything else (no header, another scheme, an empty or spaced token) is refused.
 */
export function bearerToken(authorization: string | undefined, log: Logger): string {
  if (authorization === undefined || authorization.trim() === "") refuse(log, "no Authorization header");
  const token = /^Bearer +([^\s]+)$/i.exec(authorization.trim())?.[1];
  if (token === undefined) refuse(log, "the Authorization header is not a Bearer credential");
  return token;
}
