import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { MAX_DESCRIPTION_LENGTH, MAX_TITLE_LENGTH } from "../../../shared/proposals/api.ts";
import type { ProposalRecord } from "../../../shared/proposals/proposals.ts";
import type { Typed } from "../forms.ts";
import { type Html, html } from "../html.ts";
import * as u from "../urls.ts";

/** Opening a proposal needs a writer, as `POST …/proposals`. */
export const mayOpenProposal = (access: RepoAccess) => atLeast(access.role, "writer");

/** Editing or closing needs an open proposal and its author or a maintainer (`lockForChange`). */
export const mayChangeProposal = (actor: Actor | null, access: RepoAccess, p: ProposalRecord) =>
  p.state === "open" &&
  atLeast(access.role, "writer") &&
  (p.author === actor?.identity || atLeast(access.role, "maintainer"));

export const openProposalForm = (repo: string, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.proposalsUrl(repo)}" id="open-proposal"><fieldset><legend>Open a proposal</legend>${csrf}
<label for="proposal-branch">Branch</label><input id="proposal-branch" name="branch" required maxlength="200" value="${typed["branch"] ?? ""}">
<label for="proposal-title">Title</label><input id="proposal-title" name="title" required maxlength="${MAX_TITLE_LENGTH}" value="${typed["title"] ?? ""}">
<label for="proposal-description">Description</label><textarea id="proposal-description" name="description" maxlength="${MAX_DESCRIPTION_LENGTH}">
${typed["description"] ?? ""}</textarea>
<button type="submit">Open proposal</button></fieldset></form>`;

export const editProposalForm = (repo: string, id: string, csrf: Html, typed: Typed) =>
  html`<form method="post" action="${u.proposalEditUrl(repo, id)}" id="edit-proposal"><fieldset><legend>Edit the proposal</legend>${csrf}
<label for="proposal-title">Title</label><input id="proposal-title" name="title" required maxlength="${MAX_TITLE_LENGTH}" value="${typed["title"] ?? ""}">
<label for="proposal-description">Description</label><textarea id="proposal-description" name="description" maxlength="${MAX_DESCRIPTION_LENGTH}">
${typed["description"] ?? ""}</textarea>
<button type="submit">Save proposal</button></fieldset></form>`;

export const closeProposalForm = (repo: string, id: string, csrf: Html) =>
  html`<form method="post" action="${u.proposalCloseUrl(repo, id)}" id="close-proposal">${csrf}<button type="submit">Close proposal</button></form>`;
