import { z } from "zod";
import { orgRoles } from "../../shared/access/roles.ts";
import { email, identity, orgName } from "../../shared/api/names.ts";
import {
  createdInviteResponse,
  inviteListResponse,
  memberListResponse,
  memberResponse,
  orgListResponse,
  orgResponse,
} from "../../shared/api/orgs.ts";
import { repoListResponse } from "../../shared/api/repos.ts";
import { noFields } from "../../shared/api/strict.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";
import { acceptInvite, createInvite, listInvites, revokeInvite } from "../../shared/orgs/invites.ts";
import { listMembers, putMember, removeMember } from "../../shared/orgs/members.ts";
import { createOrg, deleteOrg, getOrg, listOrgs } from "../../shared/orgs/orgs.ts";
import { listRepos } from "../../shared/repos/repos.ts";

const orgParams = z.object({ org: orgName });
const memberParams = z.object({ org: orgName, identity });
const orgRole = z.enum(orgRoles, "must be 'owner' or 'member'");

export const orgRoutes = [
  route({
    method: "POST",
    path: "/orgs",
    access: "user",
    summary: "Create an org; the caller becomes its owner",
    body: z.strictObject({ name: orgName }),
    responses: { 201: orgResponse },
    handler: async ({ ctx, actor, body }) => created(await createOrg(ctx.pool, actor, body.name)),
  }),
  route({
    method: "GET",
    path: "/orgs",
    access: "user",
    summary: "List the orgs the caller may see",
    responses: { 200: orgListResponse },
    handler: async ({ ctx, actor }) => ok({ orgs: await listOrgs(ctx.pool, actor) }),
  }),
  route({
    method: "GET",
    path: "/orgs/:org",
    access: "user",
    summary: "Get an org",
    params: orgParams,
    responses: { 200: orgResponse },
    handler: async ({ ctx, actor, params }) => ok(await getOrg(ctx.pool, actor, params.org)),
  }),
  route({
    method: "DELETE",
    path: "/orgs/:org",
    access: "user",
    summary: "Delete an org that has no repos (owner or global admin)",
    params: orgParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, params }) => {
      await deleteOrg(ctx.pool, actor, params.org);
      return noContent();
    },
  }),
  route({
    method: "GET",
    path: "/orgs/:org/repos",
    access: "user",
    summary: "List the org's repos the caller may read",
    params: orgParams,
    responses: { 200: repoListResponse },
    handler: async ({ ctx, actor, params }) => ok({ repos: await listRepos(ctx.pool, actor, params.org) }),
  }),
  route({
    method: "GET",
    path: "/orgs/:org/members",
    access: "user",
    summary: "List members",
    params: orgParams,
    responses: { 200: memberListResponse },
    handler: async ({ ctx, actor, params }) =>
      ok({ members: await listMembers(ctx.pool, actor, params.org) }),
  }),
  route({
    method: "POST",
    path: "/orgs/:org/members/:identity",
    access: "user",
    summary: "Add a member or change a member's role (owner or global admin)",
    params: memberParams,
    body: z.strictObject({ role: orgRole }),
    responses: { 200: memberResponse, 201: memberResponse },
    handler: async ({ ctx, actor, params, body }) => {
      const { member, created: isNew } = await putMember(
        ctx.pool,
        actor,
        params.org,
        params.identity,
        body.role,
      );
      return isNew ? created(member) : ok(member);
    },
  }),
  route({
    method: "DELETE",
    path: "/orgs/:org/members/:identity",
    access: "user",
    summary: "Remove a member (owner or global admin; a member may leave)",
    params: memberParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, params }) => {
      await removeMember(ctx.pool, actor, params.org, params.identity);
      return noContent();
    },
  }),
  route({
    method: "GET",
    path: "/orgs/:org/invites",
    access: "user",
    summary: "List pending invitations (owner or global admin)",
    params: orgParams,
    responses: { 200: inviteListResponse },
    handler: async ({ ctx, actor, params }) =>
      ok({ invites: await listInvites(ctx.pool, actor, params.org) }),
  }),
  route({
    method: "POST",
    path: "/orgs/:org/invites",
    access: "user",
    summary: "Invite an email address; the token is shown only in this response",
    params: orgParams,
    body: z.strictObject({ email, role: orgRole }),
    responses: { 201: createdInviteResponse },
    handler: async ({ ctx, actor, params, body }) =>
      created(await createInvite(ctx.pool, actor, params.org, body.email, body.role)),
  }),
  route({
    method: "POST",
    path: "/orgs/:org/invites/:token/accept",
    access: "user",
    summary: "Accept an invitation sent to the caller's email",
    params: z.object({
      org: orgName,
      token: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/, "is not an invitation token"),
    }),
    body: noFields,
    responses: { 200: memberResponse },
    handler: async ({ ctx, actor, params }) =>
      ok(await acceptInvite(ctx.pool, actor, params.org, params.token)),
  }),
  route({
    method: "DELETE",
    path: "/orgs/:org/invites/:id",
    access: "user",
    summary: "Revoke a pending invitation (owner or global admin)",
    params: z.object({ org: orgName, id: z.uuid("must be an invitation id") }),
    responses: { 204: null },
    handler: async ({ ctx, actor, params }) => {
      await revokeInvite(ctx.pool, actor, params.org, params.id);
      return noContent();
    },
  }),
];
