import { z } from "zod";
import { roles } from "../../shared/access/roles.ts";
import { identity } from "../../shared/api/names.ts";
import { roleListResponse, roleResponse } from "../../shared/api/repos.ts";
import { noContent, ok, route } from "../../shared/http/route.ts";
import { listRoles, removeRole, setRole } from "../../shared/roles/roles.ts";

const roleParams = z.object({ repo: z.string(), identity });

export const roleRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/roles",
    access: { repo: "admin" },
    summary: "List role assignments",
    responses: { 200: roleListResponse },
    handler: async ({ ctx, repo }) => ok({ roles: await listRoles(ctx.pool, repo) }),
  }),
  route({
    method: "PUT",
    path: "/repos/:repo*/-/roles/:identity",
    access: { repo: "admin" },
    summary: "Grant or change a role",
    params: roleParams,
    body: z.strictObject({ role: z.enum(roles, "must be one of reader, writer, maintainer, admin") }),
    responses: { 200: roleResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      ok(await setRole(ctx.pool, actor, repo, params.identity, body.role)),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/roles/:identity",
    access: { repo: "admin" },
    summary: "Revoke a role",
    params: roleParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, repo, params }) => {
      await removeRole(ctx.pool, actor, repo, params.identity);
      return noContent();
    },
  }),
];
