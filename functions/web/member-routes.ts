import { z } from "zod";
import type { RepoAccess } from "../../shared/access/roles.ts";
import { orgRoles, roles } from "../../shared/access/roles.ts";
import { email, identity } from "../../shared/api/names.ts";
import type { Actor } from "../../shared/auth/actor.ts";
import type { AppContext } from "../../shared/context.ts";
import { redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { acceptInviteById, createInvite } from "../../shared/orgs/invites.ts";
import { putMember, removeMember } from "../../shared/orgs/members.ts";
import { removeRole, setRole } from "../../shared/roles/roles.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, orRefusedPage, parseForm, type Typed } from "./forms.ts";
import { type Html, html } from "./html.ts";
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

/** Who posts a members form, on which repo: what a form's operation runs as. */
interface Poster {
  ctx: AppContext;
  actor: Actor;
  repo: RepoAccess;
}

/**
 * A form of the members page (repo admins reach it; the org's operations check org ownership
 * themselves): its fields validated by `fields`, run by `run`, answered with `303` back to the
 * page, or refused with `form` again as typed and a link back.
 */
function membersForm<S extends z.ZodType>(o: {
  path: string;
  summary: string;
  title: string;
  fields: S;
  form: (p: Poster, csrf: Html, typed: Typed) => Html;
  run: (p: Poster, form: z.output<S>) => Promise<unknown>;
}) {
  return route({
    method: "POST",
    path: `/ui/repos/:repo*/-/members/${o.path}`,
    access: { repo: "admin" },
    summary: o.summary,
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const poster = { ctx: call.ctx, actor: call.actor, repo: call.repo };
      const back = u.membersUrl(call.repo.repo.name);
      const typed = formFields(call);
      const refused = {
        title: o.title,
        form: (t: Typed) => o.form(poster, csrfField(call.actor), t),
        back: { label: "Back to the members", url: back },
      };
      return orRefusedPage(call, typed, refused, async () => {
        await o.run(poster, parseForm(typed, o.fields));
        return seeOther(back, 303);
      });
    },
  });
}

export const memberRoutes = [
  membersForm({
    path: "roles",
    summary: "Web: grant, change or revoke a role on the repo (form post)",
    title: "The role was not changed",
    fields: repoRoleFields,
    form: ({ repo }, csrf, t) => grantRoleForm(repo.repo.name, csrf, t),
    run: ({ ctx, actor, repo }, form) =>
      form.action === "set"
        ? setRole(ctx.pool, actor, repo, form.identity, form.role)
        : removeRole(ctx.pool, actor, repo, form.identity),
  }),
  membersForm({
    path: "org",
    summary: "Web: change the org role of a member of the repo's org, or remove them (form post; org owner)",
    title: "The member was not changed",
    fields: orgMemberFields,
    form: ({ repo }, csrf, t) => memberRowForm(u.orgMemberFormUrl(repo.repo.name), csrf, orgRoles, t),
    run: ({ ctx, actor, repo }, form) =>
      form.action === "set"
        ? putMember(ctx.pool, actor, repo.repo.owner, form.identity, form.role)
        : removeMember(ctx.pool, actor, repo.repo.owner, form.identity),
  }),
  membersForm({
    path: "invites",
    summary: "Web: invite an email address to the repo's org (form post; org owner)",
    title: "The invitation was not sent",
    fields: inviteFields,
    form: ({ repo }, csrf, t) => inviteForm(repo.repo.name, repo.repo.owner, csrf, t),
    run: ({ ctx, actor, repo }, form) =>
      createInvite(ctx.pool, actor, repo.repo.owner, form.email, form.role),
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
