import type { CommentRecord } from "../../../shared/comments/comments.ts";
import { MAX_COMMENT_BODY } from "../../../shared/comments/comments.ts";
import { type Html, html } from "../html.ts";
import { timeTag } from "../time.ts";
import * as u from "../urls.ts";

/** A comment or reply the service refused, shown again with what was typed so nothing is lost. */
export interface CommentDraft {
  message: string;
  path: string;
  reply_to?: string | undefined;
  body: string;
}

/**
 * Where the comments of a branch's page are posted, and by whom: `csrf` is null when the reader
 * may not comment (not a writer, or the branch is no longer active), and then no form is offered.
 */
export interface Discussion {
  repo: string;
  branch: string;
  csrf: Html | null;
  draft?: CommentDraft | undefined;
}

const refusedNotice = (message: string) =>
  html`<div class="notice refused" role="alert" id="comment-refused"><h2>Comment not posted</h2><p>${message}</p></div>`;

/** The draft, if it was typed into the form for this path and parent (undefined: a new comment). */
function draftFor(d: Discussion, path: string, replyTo: string | undefined): CommentDraft | undefined {
  const draft = d.draft;
  return draft && draft.path === path && (draft.reply_to || undefined) === replyTo ? draft : undefined;
}

/** The form that comments on `path`, or with `parent` replies to that comment. */
function commentForm(
  d: Discussion,
  csrf: Html,
  path: string,
  { parent, again = false }: { parent?: CommentRecord; again?: boolean } = {},
): Html {
  const key = again
    ? "comment-draft"
    : parent
      ? `reply-${parent.id}`
      : `comment-on-${encodeURIComponent(path)}`;
  const label = parent
    ? `Reply to ${parent.author}`
    : again
      ? `Post it again as a comment on ${path}`
      : `Discuss ${path}`;
  const draft = draftFor(d, path, parent?.id);
  const form = html`<form method="post" action="${u.commentPostUrl(d.repo, d.branch)}" class="comment-form">${csrf}
${draft ? refusedNotice(draft.message) : ""}
<input type="hidden" name="path" value="${path}">${parent ? html`<input type="hidden" name="reply_to" value="${parent.id}">` : ""}
<label for="${key}">${label}</label><textarea id="${key}" name="body" required maxlength="${MAX_COMMENT_BODY}">${draft?.body ?? ""}</textarea>
<button type="submit">${parent ? "Reply" : "Comment"}</button></form>`;
  // A reply form stays folded until asked for (or until it holds a refused draft).
  return parent
    ? html`<details class="reply"${draft ? html` open` : ""}><summary>Reply</summary>${form}</details>`
    : form;
}

/** One comment with its author and time, its replies threaded under it, and a reply form. */
function commentItem(d: Discussion, c: CommentRecord, replies: Map<string, CommentRecord[]>): Html {
  const children = replies.get(c.id) ?? [];
  return html`<li class="comment" id="${u.commentAnchor(c.id)}"><p class="comment-meta"><strong class="comment-author">${c.author}</strong> · ${timeTag(c.created_at)} · at sequence ${c.sequence}</p>
<div class="comment-body">${c.body}</div>
${d.csrf ? commentForm(d, d.csrf, c.path, { parent: c }) : ""}
${children.length > 0 ? html`<ol class="replies">${children.map((r) => commentItem(d, r, replies))}</ol>` : ""}</li>`;
}

/**
 * The comments on one file, oldest first, each reply under the comment it answers (a reply whose
 * parent was deleted stands as a comment of its own), and the form that comments on the file.
 */
export function commentThread(d: Discussion, path: string, comments: CommentRecord[]): Html {
  const ids = new Set(comments.map((c) => c.id));
  const replies = new Map<string, CommentRecord[]>();
  const roots: CommentRecord[] = [];
  for (const c of comments) {
    if (c.reply_to && ids.has(c.reply_to)) replies.set(c.reply_to, [...(replies.get(c.reply_to) ?? []), c]);
    else roots.push(c);
  }
  return html`<div class="comments">${roots.length > 0 ? html`<ol class="thread">${roots.map((c) => commentItem(d, c, replies))}</ol>` : ""}
${d.csrf ? commentForm(d, d.csrf, path) : ""}</div>`;
}

/**
 * A refused draft that no form on the page can hold (its parent is gone, its file is not shown,
 * or the branch no longer takes comments): the reason and the text, to copy or post again.
 */
export function strayDraft(
  d: Discussion,
  shown: { path: string; comments: CommentRecord[] }[],
): Html | string {
  const draft = d.draft;
  if (!draft) return "";
  const thread = shown.find((s) => s.path === draft.path);
  const placed =
    d.csrf !== null &&
    thread !== undefined &&
    (!draft.reply_to || thread.comments.some((c) => c.id === draft.reply_to));
  if (placed) return "";
  if (!d.csrf)
    return html`${refusedNotice(draft.message)}<section aria-labelledby="kept-h" id="kept"><h2 id="kept-h">What you typed on <code>${draft.path}</code></h2><pre>${draft.body}</pre></section>`;
  // Offered again as a comment of its own on the file, with the text kept.
  return commentForm({ ...d, draft: { ...draft, reply_to: undefined } }, d.csrf, draft.path, { again: true });
}
