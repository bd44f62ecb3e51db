import type { Typed } from "../forms.ts";
import { type Html, html } from "../html.ts";
import * as u from "../urls.ts";

/** The forms that create an org, a repo in an org and a branch in a repo, filled with `typed`. */

export const createOrgForm = (csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.createOrgUrl()}" id="create-org"><fieldset><legend>New org</legend>${csrf}
<label for="org-name">Org name</label><input id="org-name" name="name" required maxlength="64" value="${typed["name"] ?? ""}">
<button type="submit">Create org</button></fieldset></form>`;

export const createRepoForm = (org: string, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.createRepoUrl(org)}" id="create-repo"><fieldset><legend>New repo in ${org}</legend>${csrf}
<label for="repo-name">Repo name</label><input id="repo-name" name="name" required maxlength="200" value="${typed["name"] ?? ""}">
<button type="submit">Create repo</button></fieldset></form>`;

export const createBranchForm = (repo: string, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.createBranchUrl(repo)}" id="create-branch"><fieldset><legend>New branch from main</legend>${csrf}
<label for="branch-name">Branch name</label><input id="branch-name" name="name" required maxlength="200" value="${typed["name"] ?? ""}">
<label><input type="checkbox" name="draft" value="true"${typed["draft"] === "true" ? html` checked` : ""}> Draft</label>
<button type="submit">Create branch</button></fieldset></form>`;
