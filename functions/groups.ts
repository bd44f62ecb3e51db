import type { AnyRoute } from "../shared/http/route.ts";
import { archiveRoutes } from "./archives/routes.ts";
import { attestationRoutes } from "./attestations/routes.ts";
import { authRoutes } from "./auth/routes.ts";
import { autoMergeRoutes } from "./auto-merge/routes.ts";
import { branchRoutes } from "./branches/routes.ts";
import { checkRoutes } from "./checks/routes.ts";
import { ciRoutes } from "./ci/routes.ts";
import { ciCronRoutes, ciReaperRoutes } from "./ci-timers/routes.ts";
import { ciTokenRoutes } from "./ci-token/routes.ts";
import { cliAuthRoutes } from "./cli-auth/routes.ts";
import { commentRoutes } from "./comments/routes.ts";
import { commitRoutes } from "./commits/routes.ts";
import { eventRoutes } from "./events/routes.ts";
import { healthRoutes } from "./health/routes.ts";
import { issueRoutes } from "./issues/routes.ts";
import { meRoutes } from "./me/routes.ts";
import { mergeRoutes } from "./merge/routes.ts";
import { metaRoutes } from "./meta/routes.ts";
import { oidcRoutes } from "./oidc/routes.ts";
import { orgRoutes } from "./orgs/routes.ts";
import { proposalRoutes } from "./proposals/routes.ts";
import { purgeRoutes } from "./purge/routes.ts";
import { releaseRoutes } from "./releases/routes.ts";
import { repoRoutes } from "./repos/routes.ts";
import { reviewRoutes } from "./reviews/routes.ts";
import { roleRoutes } from "./roles/routes.ts";
import { schedulerRoutes } from "./scheduler/routes.ts";
import { searchRoutes } from "./search/routes.ts";
import { secretRoutes } from "./secrets/routes.ts";
import { subscriptionRoutes } from "./subscriptions/routes.ts";
import { logKeyRoutes, transparencyRoutes } from "./transparency/routes.ts";
import { webRoutes } from "./web/routes.ts";
import { webhookDeliveryRoutes } from "./webhook-delivery/routes.ts";

/**
 * The public endpoint groups. In the cloud each is its own function (or, for `events`, the
 * long-lived SSE service) behind the load balancer; locally all are mounted on one server.
 *
 * A group is a set of paths a load balancer URL map can express (docs/routing.md): a URL map
 * matches path prefixes, templates whose `**` comes last, and headers, so it cannot tell
 * `/repos/a/b/-/commit` from `/repos/a/b/-/tree` (repo names hold slashes). Hence one `repos`
 * group for everything under `/repos/`, and the streams picked out by `Accept: text/event-stream`.
 * The folders under functions/ stay split by aggregate; a group only composes their tables.
 * Order does not matter: where two patterns match one path the more literal one wins
 * (shared/http/dispatch.ts).
 */
export const groups = {
  /** `/healthz`, `/openapi.json` and `/me`; also the URL map's default service (its 404s). */
  // The tuple type keeps `/me` and `/healthz` typed for the client (cli/client/types.ts): an array
  // literal's element type would collapse them into the untyped AnyRoute of metaRoutes.
  meta: [...healthRoutes, ...meRoutes, ...metaRoutes(() => allRoutes)] as (
    | (typeof healthRoutes)[number]
    | (typeof meRoutes)[number]
    | AnyRoute
  )[],
  /** Everything under `/repos` except the event stream. */
  repos: [
    ...repoRoutes,
    ...branchRoutes,
    ...commitRoutes,
    ...searchRoutes,
    ...archiveRoutes,
    ...roleRoutes,
    ...reviewRoutes,
    ...checkRoutes,
    ...commentRoutes,
    ...proposalRoutes,
    ...releaseRoutes,
    ...mergeRoutes,
    ...purgeRoutes,
    ...ciRoutes,
    ...secretRoutes,
    ...issueRoutes,
    ...transparencyRoutes,
    ...attestationRoutes,
  ],
  /** `/orgs` and `/orgs/**`. */
  orgs: orgRoutes,
  /** `/subscriptions` and `/subscriptions/**`. */
  subscriptions: subscriptionRoutes,
  /** The SSE streams: `/events` and `/repos/**` with `Accept: text/event-stream`. */
  events: eventRoutes,
  /** The CI scheduler's HTTP side: `/claim`, `/jobs/**`, `/webhook`, `/run/**`. */
  scheduler: schedulerRoutes,
  /**
   * The job-token endpoint, the issuer's discovery documents and the CLI's sign-in settings:
   * `/ci/token`, `/.well-known/**`, `/auth/cli`.
   */
  identity: [...ciTokenRoutes, ...oidcRoutes, ...cliAuthRoutes, ...logKeyRoutes],
  /**
   * The web interface, `/` and `/ui/**` (docs/web.md), and browser sign-in, `/auth/login`,
   * `/auth/callback`, `/auth/logout` (docs/sessions.md).
   */
  web: [...authRoutes, ...webRoutes],
} satisfies Record<string, AnyRoute[]>;

/** Every public route: what the local server mounts and the OpenAPI document describes. */
export const allRoutes: AnyRoute[] = Object.values(groups).flat();

/**
 * The internal functions: never behind the load balancer, invoked only by Cloud Tasks and Cloud
 * Scheduler with Google-signed OIDC tokens (access kind `internal`). Locally their work runs in
 * the process (the PostgreSQL-backed queue worker and timers), so the local server mounts none.
 */
export const internalFunctions = {
  webhookDelivery: webhookDeliveryRoutes,
  ciCron: ciCronRoutes,
  ciReaper: ciReaperRoutes,
  /** Cloud Tasks: the auto-merge subscription's events (docs/auto-merge.md). */
  autoMerge: autoMergeRoutes,
} satisfies Record<string, AnyRoute[]>;

/**
 * The deployment table, one entry per cloud function: function name (its entry point, and the
 * name terraform deploys) → the routes it serves. functions/index.ts registers each with the
 * functions framework; the build bundles each; terraform/ and its tests read the same names.
 * Every group but `events`: the streams run on the SSE service (functions/sse.ts, the container
 * image), so a function bundle of them would never be deployed.
 */
export const cloudFunctions: Record<string, readonly AnyRoute[]> = {
  ...Object.fromEntries(Object.entries(groups).filter(([name]) => name !== "events")),
  ...internalFunctions,
};

/**
 * The functions that compile Rego (the merge route, in `repos`; auto-merge's attempts, in
 * `autoMerge`; docs/policies.md): their bundles carry the `opa` binary. Typed by the function
 * names, so a regrouping that renames one fails the type check instead of shipping a bundle
 * without opa.
 */
export const policyFunctions: ReadonlySet<string> = new Set<
  keyof typeof groups | keyof typeof internalFunctions
>(["repos", "autoMerge"]);

/** Whether a function of the table is internal (no load balancer route, no public invoker). */
export const isInternalFunction = (name: string): boolean => Object.hasOwn(internalFunctions, name);
