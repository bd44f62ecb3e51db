import { type OrgRole, orgRoles, type RepoAccess, type Role, roles } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import type { AppContext } from "../../../shared/context.ts";
import { requireOrg } from "../../../shared/orgs/access.ts";
import { listInvites, listInvitesFor } from "../../../shared/orgs/invites.ts";
import { listMembers } from "../../../shared/orgs/members.ts";
import { listRoles } from "../../../shared/roles/roles.ts";
import type { Typed } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";

/**
 * Members and roles (docs/web.md, "Members and roles"): the repo's own role grants, which its
 * admins change (the API's `…/roles` rule), and the members and invitations of the repo's org,
 * which the org's owners and global admins change (the API's `/orgs/{org}/…` rules). A form is
 * rendered only for those the operation behind it would let use it.
 */

/** A role picker; `label` names it when no visible label does (a table row's). */
function roleSelect(
  id: string,
  choices: readonly string[],
  current: string | undefined,
  label?: string,
): Html {
  return html`<select id="${id}" name="role"${label ? html` aria-label="${label}"` : ""}>${choices.map(
    (r) => html`<option value="${r}"${r === current ? html` selected` : ""}>${r}</option>`,
  )}</select>`;
}

/** One row's form: a new role for `identity`, or its removal (two buttons, one form). */
function rowForm(
  action: string,
  csrf: Html,
  id: string,
  who: string,
  choices: readonly string[],
  current: string,
) {
  return html`<form method="post" action="${action}" class="inline member-row">${csrf}
<input type="hidden" name="identity" value="${who}">
${roleSelect(id, choices, current, `Role of ${who}`)}
<button type="submit" name="action" value="set">Change role</button>
<button type="submit" name="action" value="remove">Remove</button></form>`;
}

/** Grant a role on the repo to an identity (repo admins), filled with `typed`. */
export const grantRoleForm = (repo: string, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.repoRoleFormUrl(repo)}" id="grant-role"><fieldset><legend>Grant a role on this repo</legend>${csrf}
<input type="hidden" name="action" value="set">
<label for="grant-identity">Identity (email)</label><input id="grant-identity" name="identity" required maxlength="254" value="${typed["identity"] ?? ""}">
<label for="grant-role-select">Role</label>${roleSelect("grant-role-select", roles, typed["role"] ?? "reader")}
<button type="submit">Grant role</button></fieldset></form>`;

/** Invite an email address to the org (its owners and global admins), filled with `typed`. */
export const inviteForm = (repo: string, org: string, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.inviteFormUrl(repo)}" id="invite"><fieldset><legend>Invite someone to ${org}</legend>${csrf}
<label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required maxlength="254" value="${typed["email"] ?? ""}">
<label for="invite-role">Org role</label>${roleSelect("invite-role", orgRoles, typed["role"] ?? "member")}
<button type="submit">Invite</button></fieldset></form>`;

/** A row's form again after a refusal: the identity it was about, the role as chosen. */
export const memberRowForm = (
  action: string,
  csrf: Html,
  choices: readonly (Role | OrgRole)[],
  typed: Typed,
) => rowForm(action, csrf, "refused-role", typed["identity"] ?? "", choices, typed["role"] ?? "");

async function orgSection(ctx: AppContext, actor: Actor, access: RepoAccess, csrf: Html): Promise<Html> {
  const repo = access.repo.name;
  const org = access.repo.owner;
  const { manage } = await requireOrg(ctx.pool, org, actor);
  const [members, invites] = await Promise.all([
    listMembers(ctx.pool, actor, org),
    manage ? listInvites(ctx.pool, actor, org) : Promise.resolve([]),
  ]);
  return html`<section aria-labelledby="org-h" id="org-members"><h2 id="org-h">Members of the org <a href="${u.orgUrl(org)}">${org}</a></h2>
<p class="muted">An owner of the org is an admin of its repos, a member a reader.</p>
<table><thead><tr><th scope="col">Identity</th><th scope="col">Org role</th><th scope="col">Added</th>${manage ? html`<th scope="col">Change</th>` : ""}</tr></thead><tbody>
${members.map(
  (m, i) =>
    html`<tr data-member="${m.identity}"><td>${m.identity}</td><td>${m.role}</td><td>${timeTag(m.added_at)}</td>${manage ? html`<td>${rowForm(u.orgMemberFormUrl(repo), csrf, `org-role-${i}`, m.identity, orgRoles, m.role)}</td>` : ""}</tr>`,
)}
</tbody></table>
${
  manage
    ? html`<h3>Pending invitations</h3>
${
  invites.length === 0
    ? html`<p>None.</p>`
    : html`<table id="invites"><thead><tr><th scope="col">Email</th><th scope="col">Org role</th><th scope="col">Invited by</th><th scope="col">Expires</th></tr></thead><tbody>
${invites.map((v) => html`<tr><td>${v.email}</td><td>${v.role}</td><td>${v.created_by}</td><td>${timeTag(v.expires_at)}</td></tr>`)}
</tbody></table>`
}
<p class="muted">The invitee sees the invitation on their start page once signed in with that email, and accepts it there.</p>
${inviteForm(repo, org, csrf)}`
    : ""
}</section>`;
}

/** The repo's role grants with their forms (the page is for repo admins), and its org's members. */
export async function membersPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  csrf: Html,
): Promise<Html> {
  const name = access.repo.name;
  const grants = await listRoles(ctx.pool, access);
  const body = html`<h1>Members</h1>
<section aria-labelledby="roles-h" id="repo-roles"><h2 id="roles-h">Roles on this repo</h2>
${
  grants.length === 0
    ? html`<p>No roles granted on this repo.</p>`
    : html`<table><thead><tr><th scope="col">Identity</th><th scope="col">Role</th><th scope="col">Granted by</th><th scope="col">Granted</th><th scope="col">Change</th></tr></thead><tbody>
${grants.map(
  (r, i) =>
    html`<tr data-grant="${r.identity}"><td>${r.identity}</td><td>${r.role}</td><td>${r.granted_by}</td><td>${timeTag(r.granted_at)}</td><td>${rowForm(u.repoRoleFormUrl(name), csrf, `repo-role-${i}`, r.identity, roles, r.role)}</td></tr>`,
)}
</tbody></table>`
}
${grantRoleForm(name, csrf)}</section>
${await orgSection(ctx, actor, access, csrf)}`;
  return page({
    title: `Members of ${name}`,
    actor,
    repo: access,
    tab: "members",
    crumbs: repoCrumbs(name),
    body,
  });
}

/** The invitations waiting for the caller, each with its Accept button (the start page). */
export async function myInvitesSection(ctx: AppContext, actor: Actor, csrf: Html): Promise<Html | ""> {
  const invites = await listInvitesFor(ctx.pool, actor);
  if (invites.length === 0) return "";
  return html`<section aria-labelledby="invites-h" id="my-invites"><h2 id="invites-h">Invitations</h2><ul>
${invites.map(
  (
    v,
  ) => html`<li data-invite="${v.org}">${v.created_by} invites you to <strong>${v.org}</strong> as ${v.role} <span class="muted">(until ${timeTag(v.expires_at)})</span>
<form method="post" action="${u.acceptInviteUrl(v.id)}" class="inline">${csrf}<button type="submit">Accept</button></form></li>`,
)}</ul></section>`;
}
