import type { DevActorInfo } from "./dev-identity.ts";

/** The CI job behind a job OIDC JWT (SPEC, Authentication 5), as the database knows it now. */
export interface JobActor {
  /** `ci_jobs.id`, also the token's `job_id`. */
  id: string;
  repoId: number;
  /** The repo's full name, `<org>/<repo>`. */
  repo: string;
  /** The branch the job tests: the only branch it may report check runs on. */
  branch: string;
  /** The branch head the job is pinned to: a check run's default sequence. */
  sequence: number;
  /** The claim the token was issued to: the job's access ends with it. */
  attempt: number;
}

/** The authenticated caller of a request. */
export interface Actor {
  /** The identity: the ID token's `email` claim (or DEV_IDENTITY), or `ci-job:<job_id>` for a job token. */
  identity: string;
  /** BOOTSTRAP_ADMIN and GLOBAL_ADMINS act as admin on every org and repo. Never a job. */
  globalAdmin: boolean;
  /**
   * Set when the caller is a CI job with its job OIDC JWT. Such a caller only reads its own repo
   * and reports check runs on its job's branch (shared/http/access.ts, docs/ci-identity.md).
   */
  job?: JobActor;
  /**
   * Set when the caller signed in with the session cookie (shared/auth/sessions.ts): its
   * mutations must pass the CSRF checks (shared/auth/csrf.ts) with this token, which pages embed.
   * `idHash` (the session's key in `sessions`) lets a long-lived event stream see the session end.
   */
  session?: { csrfToken: string; idHash: Buffer };
  /** Set in development mode (DEV_IDENTITY/DEV_IDENTITIES): who the web switcher offers. */
  dev?: DevActorInfo;
}
