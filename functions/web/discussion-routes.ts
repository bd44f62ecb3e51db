import { z } from "zod";
import type { RepoAccess } from "../../shared/access/roles.ts";
import { branchName, sequenceParam } from "../../shared/api/names.ts";
import { commentRequest } from "../../shared/comments/api.ts";
import { addComment } from "../../shared/comments/comments.ts";
import type { AppContext } from "../../shared/context.ts";
import { DomainError } from "../../shared/errors.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { proposalId } from "../../shared/proposals/api.ts";
import { getProposal, getProposalByNumber, listProposals } from "../../shared/proposals/proposals.ts";
import { archiveReply } from "../archives/routes.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, parseForm, type Typed, wantsHtml } from "./forms.ts";
import { diffLayoutParam } from "./pages/diff.ts";
import type { CommentDraft } from "./pages/discussion.ts";
import { proposalPage, refusedOnBranchPage } from "./pages/review.ts";
import { htmlReply, seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * Proposals by number, comments and replies on a branch's files, and archives (docs/web.md):
 * pages that stay readable after a merge, through the API's own operations and access rules.
 */

const HTML = { 200: bytes("text/html") };
const repoParams = z.object({ repo: z.string() });
/** A proposal's number in its repo (`/proposals/12`), or its UUID, which redirects to the number. */
const proposalRef = z.union([
  z
    .string()
    .regex(/^[1-9]\d{0,14}$/)
    .transform(Number),
  proposalId,
]);
const commentFields = z.strictObject({
  ...csrfToken,
  path: z.string(),
  body: z.string(),
  reply_to: z.string().optional(),
});

/** The newest proposal of a branch (open, or merged or closed with it): where its forms return. */
async function proposalOfBranch(ctx: AppContext, access: RepoAccess, branch: string) {
  const [latest] = await listProposals(ctx.pool, access, { branch });
  return latest;
}

/** What a refused comment form held, to show again as typed. */
const commentDraft = (message: string, typed: Typed): CommentDraft => ({
  message,
  path: typed["path"] ?? "",
  reply_to: typed["reply_to"] || undefined,
  body: typed["body"] ?? "",
});

export const discussionRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/proposals/:ref",
    access: { repo: "reader" },
    summary: "Web: a proposal by number (its UUID redirects), open, merged or closed",
    params: z.object({ repo: z.string(), ref: proposalRef }),
    query: z.strictObject({ view: diffLayoutParam }),
    responses: { ...HTML, 302: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params, query } = call;
      if (typeof params.ref === "string") {
        const p = await getProposal(ctx.pool, repo, params.ref);
        return seeOther(u.proposalNumberUrl(repo.repo.name, p.number));
      }
      const p = await getProposalByNumber(ctx.pool, repo, params.ref);
      return htmlReply(await proposalPage(ctx, actor, repo, p.id, csrfField(actor), {}, query.view));
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/branch/:branch*/comment",
    access: { repo: "writer" },
    summary: "Web: comment on a file of a branch, or reply to a comment (form post)",
    params: z.object({ repo: z.string(), branch: branchName }),
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const proposal = await proposalOfBranch(ctx, repo, params.branch);
      const home = proposal ? u.proposalNumberUrl(name, proposal.number) : u.branchUrl(name, params.branch);
      try {
        const { path, body, reply_to } = parseForm(typed, commentFields);
        const input = parseForm(
          { branch: params.branch, path, body, ...(reply_to ? { reply_to } : {}) },
          commentRequest,
        );
        const comment = await addComment(ctx.pool, actor, repo, input);
        return seeOther(`${home}#${u.commentAnchor(comment.id)}`, 303);
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500 || !wantsHtml(call.headers)) throw err;
        // The page again, the text kept in the form it was typed in, and why it was refused.
        const refused = { comment: commentDraft(err.message, typed) };
        const where = { branch: params.branch, proposalId: proposal?.id };
        return htmlReply(await refusedOnBranchPage(ctx, actor, repo, where, refused), err.status);
      }
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/archive",
    access: { repo: "reader" },
    summary: "Web: a .tar.gz of the tree at a branch and sequence (a release's download)",
    params: repoParams,
    query: z.strictObject({ branch: branchName.default("main"), at: sequenceParam.optional() }),
    responses: { 200: bytes("application/gzip") },
    handler: async ({ ctx, actor, repo, query, log }) =>
      archiveReply(ctx, repo.repo, query, log, actor.identity),
  }),
];
