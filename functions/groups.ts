import type { AnyRoute } from "../shared/http/route.ts";
import { archiveRoutes } from "./archives/routes.ts";
import { branchRoutes } from "./branches/routes.ts";
import { checkRoutes } from "./checks/routes.ts";
import { ciRoutes } from "./ci/routes.ts";
import { ciTokenRoutes } from "./ci-token/routes.ts";
import { commentRoutes } from "./comments/routes.ts";
import { commitRoutes } from "./commits/routes.ts";
import { eventRoutes } from "./events/routes.ts";
import { healthRoutes } from "./health/routes.ts";
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
import { subscriptionRoutes } from "./subscriptions/routes.ts";

/**
 * Every endpoint group: in the cloud each is its own function (the load balancer routes by path);
 * locally all are mounted on one server. Order does not matter: a greedy `:repo*` never takes the
 * `-` segment, and where two patterns match one path the more literal one wins (shared/http/dispatch.ts).
 */
export const groups: Record<string, AnyRoute[]> = {
  health: healthRoutes,
  orgs: orgRoutes,
  roles: roleRoutes,
  reviews: reviewRoutes,
  checks: checkRoutes,
  comments: commentRoutes,
  branches: branchRoutes,
  commits: commitRoutes,
  archives: archiveRoutes,
  repos: repoRoutes,
  proposals: proposalRoutes,
  releases: releaseRoutes,
  merge: mergeRoutes,
  purge: purgeRoutes,
  events: eventRoutes,
  subscriptions: subscriptionRoutes,
  oidc: oidcRoutes,
  ci: ciRoutes,
  ciToken: ciTokenRoutes,
  scheduler: schedulerRoutes,
  meta: metaRoutes(() => allRoutes),
};

export const allRoutes: AnyRoute[] = Object.values(groups).flat();
