import { z } from "zod";
import {
  issueCommentListResponse,
  issueCommentResponse,
  issueListResponse,
  issueRefResponse,
  issueResponse,
  mentionsResponse,
} from "../../shared/api/issues.ts";
import { sequenceParam } from "../../shared/api/names.ts";
import { noFields } from "../../shared/api/strict.ts";
import { commentId } from "../../shared/comments/api.ts";
import { readCommit } from "../../shared/commits/reads.ts";
import { created, noContent, ok, route } from "../../shared/http/route.ts";
import {
  closeIssueRequest,
  issueCommentRequest,
  issueLinkRequest,
  issueListQuery,
  issueNumber,
  openIssueRequest,
  patchIssueRequest,
} from "../../shared/issues/api.ts";
import {
  addIssueComment,
  closeIssue,
  deleteIssueComment,
  editIssueComment,
  getIssue,
  listIssueComments,
  listIssues,
  openIssue,
  patchIssue,
  reopenIssue,
} from "../../shared/issues/issues.ts";
import { linkIssue } from "../../shared/issues/links.ts";
import { issuesMentionedBy, mentionsOf } from "../../shared/issues/mentions.ts";
import { proposalId } from "../../shared/proposals/api.ts";
import { getProposal } from "../../shared/proposals/proposals.ts";

const issueParams = z.object({ repo: z.string(), number: issueNumber });
const commentParams = z.object({ repo: z.string(), number: issueNumber, comment: commentId });

/** Issues (docs/issues.md), on the origin system's paths. */
export const issueRoutes = [
  route({
    method: "POST",
    path: "/repos/:repo*/-/issues",
    access: { repo: "writer" },
    summary: "Open an issue; its number comes from the repo's one sequence of #n, shared with proposals",
    body: openIssueRequest,
    responses: { 201: issueResponse },
    handler: async ({ ctx, actor, repo, body }) => created(await openIssue(ctx.pool, actor, repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/issues",
    access: { repo: "reader" },
    summary: "List issues, newest first: open by default; by label, assignee or author; paged by `before`",
    query: issueListQuery,
    responses: { 200: issueListResponse },
    handler: async ({ ctx, repo, query }) => ok({ issues: await listIssues(ctx.pool, repo, query) }),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/issues/:number",
    access: { repo: "reader" },
    summary: "Get an issue by its number (404 for a proposal's number)",
    params: issueParams,
    responses: { 200: issueResponse },
    handler: async ({ ctx, repo, params }) => ok(await getIssue(ctx.pool, repo, params.number)),
  }),
  route({
    method: "PATCH",
    path: "/repos/:repo*/-/issues/:number",
    access: { repo: "writer" },
    summary: "Change an issue's title, body, labels or assignees (its author or a maintainer)",
    params: issueParams,
    body: patchIssueRequest,
    responses: { 200: issueResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      ok(await patchIssue(ctx.pool, actor, repo, params.number, body)),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/issues/:number/close",
    access: { repo: "writer" },
    summary: "Close an open issue with a reason, completed by default (its author or a maintainer)",
    params: issueParams,
    body: closeIssueRequest,
    responses: { 200: issueResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      ok(await closeIssue(ctx.pool, actor, repo, params.number, body.reason)),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/issues/:number/reopen",
    access: { repo: "writer" },
    summary: "Reopen a closed issue (its author or a maintainer)",
    params: issueParams,
    body: noFields,
    responses: { 200: issueResponse },
    handler: async ({ ctx, actor, repo, params }) =>
      ok(await reopenIssue(ctx.pool, actor, repo, params.number)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/issues/:number/comments",
    access: { repo: "reader" },
    summary: "An issue's comments, oldest first",
    params: issueParams,
    responses: { 200: issueCommentListResponse },
    handler: async ({ ctx, repo, params }) =>
      ok({ comments: await listIssueComments(ctx.pool, repo, params.number) }),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/issues/:number/comments",
    access: { repo: "writer" },
    summary: "Comment on an issue",
    params: issueParams,
    body: issueCommentRequest,
    responses: { 201: issueCommentResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      created(await addIssueComment(ctx.pool, actor, repo, params.number, body)),
  }),
  route({
    method: "PATCH",
    path: "/repos/:repo*/-/issues/:number/comments/:comment",
    access: { repo: "writer" },
    summary: "Edit one's own comment on an issue",
    params: commentParams,
    body: issueCommentRequest,
    responses: { 200: issueCommentResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      ok(await editIssueComment(ctx.pool, actor, repo, params.number, params.comment, body)),
  }),
  route({
    method: "DELETE",
    path: "/repos/:repo*/-/issues/:number/comments/:comment",
    access: { repo: "writer" },
    summary: "Delete a comment on an issue: writers their own, maintainers any",
    params: commentParams,
    responses: { 204: null },
    handler: async ({ ctx, actor, repo, params }) => {
      await deleteIssueComment(ctx.pool, actor, repo, params.number, params.comment);
      return noContent();
    },
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/issues/:number/refs",
    access: { repo: "reader" },
    summary: "What mentions #n: commits, proposals, and other issues or their comments",
    params: issueParams,
    responses: { 200: mentionsResponse },
    handler: async ({ ctx, repo, params }) => {
      const issue = await getIssue(ctx.pool, repo, params.number);
      return ok(await mentionsOf(ctx.pool, repo, issue));
    },
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/issues/:number/refs",
    access: { repo: "writer" },
    summary: "Link an issue by hand to a commit (its sequence) or a proposal (its id) of the repo",
    params: issueParams,
    body: issueLinkRequest,
    responses: { 201: issueRefResponse },
    handler: async ({ ctx, actor, repo, params, body }) =>
      created(await linkIssue(ctx.pool, actor, repo, params.number, body)),
  }),
  // The other direction, on the origin system's paths: the issues a commit or a proposal refers to.
  route({
    method: "GET",
    path: "/repos/:repo*/-/commit/:sequence/issues",
    access: { repo: "reader" },
    summary: "The issues a commit's message refers to (#n)",
    params: z.object({ repo: z.string(), sequence: sequenceParam }),
    responses: { 200: issueListResponse },
    handler: async ({ ctx, repo, params }) => {
      const commit = await readCommit(ctx.pool, repo, params.sequence);
      return ok({
        issues: await issuesMentionedBy(ctx.pool, repo, [commit.message], { sequence: commit.sequence }),
      });
    },
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/proposals/:id/issues",
    access: { repo: "reader" },
    summary: "The issues a proposal's title and description refer to (#n)",
    params: z.object({ repo: z.string(), id: proposalId }),
    responses: { 200: issueListResponse },
    handler: async ({ ctx, repo, params }) => {
      const p = await getProposal(ctx.pool, repo, params.id);
      return ok({
        issues: await issuesMentionedBy(ctx.pool, repo, [p.title, p.description], { proposal: p.id }),
      });
    },
  }),
];
