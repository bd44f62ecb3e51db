import type { Actor } from "../auth/actor.ts";

/**
 * Who a check run is recorded as having been reported by: the caller's identity. A CI job that
 * posts with its job token will be reported as `ci-job:<job_id>` (spec, authentication item 5);
 * that case is added here, so the rest of the check code never looks at how the caller signed in.
 */
export function reporterOf(actor: Actor): string {
  return actor.identity;
}
