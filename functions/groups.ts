import type { AnyRoute } from "../shared/http/route.ts";
import { branchRoutes } from "./branches/routes.ts";
import { commitRoutes } from "./commits/routes.ts";
import { healthRoutes } from "./health/routes.ts";
import { orgRoutes } from "./orgs/routes.ts";
import { repoRoutes } from "./repos/routes.ts";
import { roleRoutes } from "./roles/routes.ts";

/**
 * Every endpoint group: in the cloud each is its own function (the load balancer routes by path);
 * locally all are mounted on one server. Order matters only within the local server's merged
 * table: repo-scoped groups (`/repos/<name>/-/...`) come before `/repos/<name>`.
 */
export const groups: Record<string, AnyRoute[]> = {
  health: healthRoutes,
  orgs: orgRoutes,
  roles: roleRoutes,
  branches: branchRoutes,
  commits: commitRoutes,
  repos: repoRoutes,
};

export const allRoutes: AnyRoute[] = Object.values(groups).flat();
