import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import { getBranch, listBranches } from "../../../shared/branches/branches.ts";
import type { AppContext } from "../../../shared/context.ts";
import type { Typed } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import * as u from "../urls.ts";
import { fileBytes } from "./content.ts";

const MAIN = "main";

/** Who may commit to `branch`: writers, and on `main` only maintainers (as `createCommit`). */
export const mayCommit = (access: RepoAccess, branch: string) =>
  atLeast(access.role, branch === MAIN ? "maintainer" : "writer");

/**
 * The commit form, filled with `typed`: a file's path and text (or an upload, which replaces the
 * text), a message, and the branch head the page was rendered at, so a commit made meanwhile is
 * refused rather than overwritten. Multipart, for the upload; the CSRF token goes first (csrf.ts).
 */
export function commitForm(repo: string, csrf: Html, typed: Typed): Html {
  return html`<form method="post" action="${u.commitFormUrl(repo)}" enctype="multipart/form-data" id="commit-form"><fieldset><legend>Commit to ${typed["branch"]}</legend>${csrf}
<input type="hidden" name="branch" value="${typed["branch"] ?? ""}">
<input type="hidden" name="expected_head_sequence" value="${typed["expected_head_sequence"] ?? ""}">
<label for="edit-path">Path</label><input id="edit-path" name="path" required maxlength="1024" value="${typed["path"] ?? ""}">
${
  typed["binary"] === "true"
    ? html`<input type="hidden" name="binary" value="true"><p class="muted" id="binary-note">A binary file: upload its replacement.</p>
<label for="edit-upload">Upload a file</label><input id="edit-upload" type="file" name="upload" required>`
    : html`<label for="edit-content">Content</label><textarea id="edit-content" name="content">
${typed["content"] ?? ""}</textarea>
<label for="edit-upload">Or upload a file instead</label><input id="edit-upload" type="file" name="upload">`
}
<label for="edit-message">Commit message</label><input id="edit-message" name="message" required maxlength="4096" value="${typed["message"] ?? ""}">
<button type="submit">Commit</button></fieldset></form>`;
}

/** Deleting a file is a commit too, refused the same way if the branch moved. */
export function deleteForm(repo: string, csrf: Html, typed: Typed): Html {
  return html`<form method="post" action="${u.commitFormUrl(repo)}" enctype="multipart/form-data" id="delete-form"><fieldset><legend>Delete ${typed["path"]}</legend>${csrf}
<input type="hidden" name="branch" value="${typed["branch"] ?? ""}">
<input type="hidden" name="expected_head_sequence" value="${typed["expected_head_sequence"] ?? ""}">
<input type="hidden" name="path" value="${typed["path"] ?? ""}">
<input type="hidden" name="delete" value="true">
<label for="delete-message">Deletion message</label><input id="delete-message" name="message" required maxlength="4096" value="${typed["delete_message"] ?? ""}">
<button type="submit">Delete file</button></fieldset></form>`;
}

/** Where a person who may not commit to `main` can edit instead: the repo's other active branches. */
async function otherBranches(ctx: AppContext, access: RepoAccess, path: string | undefined): Promise<Html> {
  const branches = (
    await listBranches(ctx.pool, access, { status: "active", draft: false, includeDraft: true })
  )
    .map((b) => b.name)
    .filter((b) => b !== MAIN);
  return html`<div class="notice" role="note" id="main-refused"><p>Committing to main needs the maintainer role. Edit on a branch instead:</p>
${branches.length === 0 ? html`<p>There is no other branch; ask a maintainer for one.</p>` : html`<ul>${branches.map((b) => html`<li><a href="${u.editUrl(access.repo.name, { branch: b, path })}">${b}</a></li>`)}</ul>`}</div>`;
}

/** The editor: a file's text at the head of a branch (or an empty one to add), to commit back. */
export async function editorPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: { branch: string; path?: string | undefined },
  csrf: Html,
): Promise<Html> {
  const name = access.repo.name;
  const branch = await getBranch(ctx.pool, access, q.branch);
  const title = q.path ? `Edit ${q.path}` : "Add a file";
  let body: Html;
  if (!mayCommit(access, branch.name)) {
    body = html`<h1>${title}</h1>${await otherBranches(ctx, access, q.path)}`;
  } else {
    const file = q.path ? await fileBytes(ctx, access, { path: q.path, branch: branch.name }) : null;
    const typed: Typed = {
      branch: branch.name,
      expected_head_sequence: String(branch.head_sequence),
      path: q.path ?? "",
      // A binary file is never put in a textarea: its bytes would not survive the round trip.
      binary: file?.contentType === "application/octet-stream" ? "true" : "",
      content: file && file.contentType !== "application/octet-stream" ? file.data.toString("utf8") : "",
      message: q.path ? `Edit ${q.path}` : "",
    };
    body = html`<h1>${title}</h1>
<p class="muted">On <a href="${u.treeUrl(name, { branch: branch.name })}">${branch.name}</a> at sequence ${branch.head_sequence}</p>
${commitForm(name, csrf, typed)}
${q.path ? deleteForm(name, csrf, { ...typed, delete_message: `Delete ${q.path}` }) : ""}`;
  }
  return page({ title, actor, repo: access, tab: "tree", crumbs: repoCrumbs(name), body });
}
