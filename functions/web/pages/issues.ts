import { atLeast, type RepoAccess } from "../../../shared/access/roles.ts";
import type { Actor } from "../../../shared/auth/actor.ts";
import type { AppContext } from "../../../shared/context.ts";
import { type IssueListQuery, MAX_ISSUE_BODY } from "../../../shared/issues/api.ts";
import { getIssue, type IssueRecord, listIssueComments, listIssues } from "../../../shared/issues/issues.ts";
import { mentionsOf } from "../../../shared/issues/mentions.ts";
import { MAX_TITLE_LENGTH } from "../../../shared/proposals/api.ts";
import type { Typed } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { page, repoCrumbs } from "../layout.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";
import { linkMentions, renderIssueMarkdown } from "./mentions.ts";

/** Opening and commenting need a writer, as the API's routes. */
export const mayWriteIssues = (access: RepoAccess) => atLeast(access.role, "writer");

/** Closing and reopening: the issue's author (a writer) or a maintainer (`lockForChange`). */
const mayChangeIssue = (actor: Actor, access: RepoAccess, issue: IssueRecord) =>
  atLeast(access.role, "writer") && (issue.author === actor.identity || atLeast(access.role, "maintainer"));

export const openIssueForm = (repo: string, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.issuesUrl(repo)}" id="open-issue"><fieldset><legend>Open an issue</legend>${csrf}
<label for="issue-title">Title</label><input id="issue-title" name="title" required maxlength="${MAX_TITLE_LENGTH}" value="${typed["title"] ?? ""}">
<label for="issue-body">Description (Markdown; <code>#12</code> links to item 12)</label><textarea id="issue-body" name="body" maxlength="${MAX_ISSUE_BODY}">
${typed["body"] ?? ""}</textarea>
<label for="issue-labels">Labels, comma-separated</label><input id="issue-labels" name="labels" value="${typed["labels"] ?? ""}">
<label for="issue-assignees">Assignees, comma-separated</label><input id="issue-assignees" name="assignees" value="${typed["assignees"] ?? ""}">
<button type="submit">Open issue</button></fieldset></form>`;

export const issueCommentForm = (repo: string, number: number, csrf: Html, typed: Typed = {}) =>
  html`<form method="post" action="${u.issueCommentsUrl(repo, number)}" id="issue-comment" class="comment-form">${csrf}
<label for="issue-comment-body">Comment</label><textarea id="issue-comment-body" name="body" required maxlength="${MAX_ISSUE_BODY}">${typed["body"] ?? ""}</textarea>
<button type="submit">Comment</button></form>`;

export const closeIssueForm = (repo: string, number: number, csrf: Html) =>
  html`<form method="post" action="${u.issueCloseUrl(repo, number)}" id="close-issue">${csrf}
<label for="close-reason">Reason</label><select id="close-reason" name="reason"><option value="completed">completed</option><option value="not_planned">not planned</option><option value="duplicate">duplicate</option></select>
<button type="submit">Close issue</button></form>`;

export const reopenIssueForm = (repo: string, number: number, csrf: Html) =>
  html`<form method="post" action="${u.issueReopenUrl(repo, number)}" id="reopen-issue">${csrf}<button type="submit">Reopen issue</button></form>`;

/** The filters as a GET form, so a filtered list is a URL to share. */
function filterForm(repo: string, q: IssueListQuery): Html {
  const option = (v: string) =>
    html`<option value="${v}"${q.state === v ? html` selected` : ""}>${v}</option>`;
  return html`<form method="get" action="${u.issuesUrl(repo)}" id="issue-filters" class="filters">
<label for="f-state">State</label><select id="f-state" name="state">${["open", "closed", "all"].map(option)}</select>
<label for="f-label">Label</label><input id="f-label" name="label" value="${q.label ?? ""}">
<label for="f-assignee">Assignee</label><input id="f-assignee" name="assignee" value="${q.assignee ?? ""}">
<label for="f-author">Author</label><input id="f-author" name="author" value="${q.author ?? ""}">
<button type="submit">Filter</button></form>`;
}

const labelList = (labels: string[]) => html`${labels.map((l) => html`<span class="label">${l}</span> `)}`;

export async function issuesPage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  q: IssueListQuery,
  csrf: Html,
): Promise<Html> {
  const name = access.repo.name;
  const issues = await listIssues(ctx.pool, access, q);
  const last = issues.at(-1);
  // Empty filters are left out of the next page's URL, as the form leaves them out of its own.
  const next =
    issues.length === q.limit && last
      ? u.issuesUrl(name, {
          state: q.state,
          label: q.label,
          assignee: q.assignee,
          author: q.author,
          before: last.number,
        })
      : null;
  const body = html`<h1>Issues</h1>
${filterForm(name, q)}
${
  issues.length === 0
    ? html`<p id="no-issues">No issues.</p>`
    : html`<table id="issues"><thead><tr><th scope="col">Title</th><th scope="col">State</th><th scope="col">Labels</th><th scope="col">Assignees</th><th scope="col">Author</th><th scope="col">Opened</th></tr></thead><tbody>
${issues.map((i) => html`<tr><td><a href="${u.issueUrl(name, i.number)}"><span class="muted">#${i.number}</span> ${i.title}</a></td><td>${i.state}</td><td>${labelList(i.labels)}</td><td>${i.assignees.join(", ")}</td><td>${i.author}</td><td>${timeTag(i.created_at)}</td></tr>`)}
</tbody></table>`
}
${next ? html`<p><a href="${next}" id="older-issues">Older issues</a></p>` : ""}
${mayWriteIssues(access) ? openIssueForm(name, csrf) : ""}`;
  return page({
    title: `Issues of ${name}`,
    actor,
    repo: access,
    tab: "issues",
    crumbs: repoCrumbs(name),
    body,
  });
}

/** The commits, proposals and issues that write `#n`. */
async function mentionedIn(ctx: AppContext, access: RepoAccess, issue: IssueRecord): Promise<Html | string> {
  const name = access.repo.name;
  const m = await mentionsOf(ctx.pool, access, issue);
  const items = [
    ...m.commits.map(
      (c) =>
        html`<li>Commit <a href="${u.commitUrl(name, c.sequence)}">${c.sequence}</a> on ${c.branch}: ${c.message.split("\n")[0]}</li>`,
    ),
    ...m.proposals.map(
      (p) =>
        html`<li>Proposal <a href="${u.issueUrl(name, p.number)}">#${p.number}</a> ${p.title} (${p.state})</li>`,
    ),
    ...m.issues.map(
      (i) =>
        html`<li>Issue <a href="${u.issueUrl(name, i.number)}">#${i.number}</a> ${i.title} (${i.state})</li>`,
    ),
  ];
  if (items.length === 0) return "";
  return html`<section aria-labelledby="mentioned-h" id="mentioned-in"><h2 id="mentioned-h">Mentioned in</h2><ul>${items}</ul></section>`;
}

/** One issue: its text, labels, comments, what mentions it, and the forms its reader may use. */
export async function issuePage(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  number: number,
  csrf: Html,
  draft: Typed = {},
): Promise<Html> {
  const name = access.repo.name;
  const issue = await getIssue(ctx.pool, access, number);
  const comments = await listIssueComments(ctx.pool, access, number);
  const state =
    issue.state === "open"
      ? html`<span class="state open">open</span>`
      : html`<span class="state closed">closed</span> (${issue.close_reason?.replace("_", " ")}) by ${issue.closed_by} ${issue.closed_at ? timeTag(issue.closed_at) : ""}`;
  const change = mayChangeIssue(actor, access, issue);
  const body = html`<h1><span class="muted">#${issue.number}</span> ${linkMentions(name, issue.title)}</h1>
<p class="issue-meta" id="issue-state">${state} · opened by ${issue.author} ${timeTag(issue.created_at)}</p>
${issue.labels.length > 0 ? html`<p id="issue-labels">Labels: ${labelList(issue.labels)}</p>` : ""}
${issue.assignees.length > 0 ? html`<p id="issue-assignees">Assigned to ${issue.assignees.join(", ")}</p>` : ""}
<div class="description issue-body" id="issue-body">${renderIssueMarkdown(name, issue.body)}</div>
<section aria-labelledby="comments-h"><h2 id="comments-h">Comments</h2>
${
  comments.length === 0
    ? html`<p class="muted">No comments yet.</p>`
    : html`<ol class="issue-thread" id="issue-comments">${comments.map(
        (c) =>
          html`<li class="comment"><p class="comment-meta"><strong class="comment-author">${c.author}</strong> · ${timeTag(c.created_at)}${c.edited_at ? " · edited" : ""}</p><div class="issue-body">${renderIssueMarkdown(name, c.body)}</div></li>`,
      )}</ol>`
}
${mayWriteIssues(access) ? issueCommentForm(name, number, csrf, draft) : ""}</section>
${await mentionedIn(ctx, access, issue)}
${change ? (issue.state === "open" ? closeIssueForm(name, number, csrf) : reopenIssueForm(name, number, csrf)) : ""}`;
  return page({
    title: `#${issue.number} ${issue.title}`,
    actor,
    repo: access,
    tab: "issues",
    crumbs: [...repoCrumbs(name), ["Issues", u.issuesUrl(name)]],
    body,
  });
}
