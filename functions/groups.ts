import type { AnyRoute } from "../shared/http/route.ts";
import { branchRoutes } from "./branches/routes.ts";
import { commitRoutes } from "./commits/routes.ts";
import { healthRoutes } from "./health/routes.ts";
import { metaRoutes } from "./meta/routes.ts";
import { orgRoutes } from "./orgs/routes.ts";
import { repoRoutes } from "./repos/routes.ts";
import { roleRoutes } from "./roles/routes.ts";

/**
 * Every endpoint group: in the cloud each is its own function (the load balancer routes by path);
 * locally all are mounted on one server. Order does not matter: a greedy `:repo*` never takes the
 * `-` segment, so `/repos/<name>` and `/repos/<name>/-/...` cannot match the same path.
 */
export const groups: Record<string, AnyRoute[]> = {
  health: healthRoutes,
  orgs: orgRoutes,
  roles: roleRoutes,
  branches: branchRoutes,
  commits: commitRoutes,
  repos: repoRoutes,
  meta: metaRoutes(() => allRoutes),
};

export const allRoutes: AnyRoute[] = Object.values(groups).flat();
