import type { Actor } from "../auth/actor.ts";

/**
 * Who a check run is recorded as having been reported by: the caller's identity. For a CI job that
 * posts with its job token that identity is `ci-job:<job_id>` (spec, authentication item 5; the
 * job token verifier, shared/auth/jobtoken.ts, makes it so), so the rest of the check code never
 * looks at how the caller signed in.
 */
export function reporterOf(actor: Actor): string {
  return actor.identity;
}
