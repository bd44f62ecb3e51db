import { z } from "zod";
import { orgRoles, roles } from "../../shared/access/roles.ts";
import { email, identity } from "../../shared/api/names.ts";
import { redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { acceptInviteById, createInvite } from "../../shared/orgs/invites.ts";
import { putMember, removeMember } from "../../shared/orgs/members.ts";
import { removeRole, setRole } from "../../shared/roles/roles.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, orRefusedPage, parseForm, type Typed } from "./forms.ts";
import { html } from "./html.ts";
import { grantRoleForm, inviteForm, memberRowForm } from "./pages/members.ts";
import { seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * Members and roles from the browser (docs/web.md): a repo's role grants (repo admins, as the
 * API's `PUT`/`DELETE …/roles/{identity}`), its org's members and invitations (the org's owners
 * and global admins, as `/orgs/{org}/members` and `/invites`; the domain functions check it), and
 * accepting an invitation from the start page. Each answers `303` back to the page it came from.
 */

const repoParams = z.object({ repo: z.string() });
/** A row's form: a new role for the identity (`set`), or its removal (`remove`, no role needed). */
const rowFields = <R extends readonly [string, ...string[]]>(choices: R) =>
  z.discriminatedUnion("action", [
    z.strictObject({ ...csrfToken, action: z.literal("set"), identity, role: z.enum(choices) }),
    z.strictObject({ ...csrfToken, action: z.literal("remove"), identity, role: z.string().optional() }),
  ]);
const repoRoleFields = rowFields(roles);
const orgMemberFields = rowFields(orgRoles);
const inviteFields = z.strictObject({ ...csrfToken, email, role: z.enum(orgRoles) });

export const memberRoutes = [
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/members/roles",
    access: { repo: "admin" },
    summary: "Web: grant, change or revoke a role on the repo (form post)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The role was not changed",
        form: (t: Typed) => grantRoleForm(name, csrfField(actor), t),
        back: { label: "Back to the members", url: u.membersUrl(name) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const form = parseForm(typed, repoRoleFields);
        if (form.action === "set") await setRole(ctx.pool, actor, repo, form.identity, form.role);
        else await removeRole(ctx.pool, actor, repo, form.identity);
        return seeOther(u.membersUrl(name), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/members/org",
    access: { repo: "admin" },
    summary: "Web: change the org role of a member of the repo's org, or remove them (form post; org owner)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The member was not changed",
        form: (t: Typed) => memberRowForm(u.orgMemberFormUrl(name), csrfField(actor), orgRoles, t),
        back: { label: "Back to the members", url: u.membersUrl(name) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const form = parseForm(typed, orgMemberFields);
        if (form.action === "set")
          await putMember(ctx.pool, actor, repo.repo.owner, form.identity, form.role);
        else await removeMember(ctx.pool, actor, repo.repo.owner, form.identity);
        return seeOther(u.membersUrl(name), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/members/invites",
    access: { repo: "admin" },
    summary: "Web: invite an email address to the repo's org (form post; org owner)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The invitation was not sent",
        form: (t: Typed) => inviteForm(name, repo.repo.owner, csrfField(actor), t),
        back: { label: "Back to the members", url: u.membersUrl(name) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const form = parseForm(typed, inviteFields);
        await createInvite(ctx.pool, actor, repo.repo.owner, form.email, form.role);
        return seeOther(u.membersUrl(name), 303);
      });
    },
  }),
  route({
    method: "POST",
    path: "/ui/invites/:id/accept",
    access: "user",
    summary: "Web: accept an invitation sent to the caller's own email (form post)",
    params: z.object({ id: z.uuid("must be an invitation id") }),
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, params } = call;
      const typed = formFields(call);
      const refused = {
        title: "The invitation was not accepted",
        // Nothing to type again: the way back is the start page, which lists what is still pending.
        form: () => html`<p>Your pending invitations are on the start page.</p>`,
        back: { label: "Back to the start page", url: u.orgsUrl() },
      };
      return orRefusedPage(call, typed, refused, async () => {
        parseForm(typed, z.strictObject(csrfToken));
        const member = await acceptInviteById(ctx.pool, actor, params.id);
        return seeOther(u.orgUrl(member.org), 303);
      });
    },
  }),
];
