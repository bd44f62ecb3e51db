import { z } from "zod";
import type { RepoAccess } from "../../shared/access/roles.ts";
import { commaList } from "../../shared/api/comma-list.ts";
import type { Actor } from "../../shared/auth/actor.ts";
import { DomainError } from "../../shared/errors.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { type Call, route } from "../../shared/http/route.ts";
import {
  closeIssueRequest,
  issueCommentRequest,
  issueNumber,
  issuePageQuery,
  openIssueRequest,
} from "../../shared/issues/api.ts";
import { addIssueComment, closeIssue, openIssue, reopenIssue } from "../../shared/issues/issues.ts";
import { getProposalByNumber } from "../../shared/proposals/proposals.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, formFields, orRefusedPage, parseForm, type Typed } from "./forms.ts";
import type { Html } from "./html.ts";
import {
  closeIssueForm,
  issueCommentForm,
  issuePage,
  issuesPage,
  openIssueForm,
  reopenIssueForm,
} from "./pages/issues.ts";
import { htmlReply, seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * Issues in the browser (docs/issues.md): the list with its filters, one issue with its comments,
 * and the forms that open, comment, close and reopen, through the API's own operations and
 * request schemas. `/issues/{n}` of a proposal's number redirects to the proposal.
 */

const HTML = { 200: bytes("text/html") };
const repoParams = z.object({ repo: z.string() });
const issueParams = z.object({ repo: z.string(), number: issueNumber });
// A filter box left empty is sent empty: read as no filter.
const emptyIsAbsent = (v: unknown) => (v === "" ? undefined : v);
const listQuery = z.preprocess(
  (q) =>
    typeof q === "object" && q !== null
      ? Object.fromEntries(Object.entries(q).map(([k, v]) => [k, emptyIsAbsent(v)]))
      : q,
  issuePageQuery,
);
const openFields = z.strictObject({
  ...csrfToken,
  title: z.string(),
  body: z.string(),
  labels: z.string(),
  assignees: z.string(),
});

/**
 * A form posted on an issue's page: `work` with what was typed, then back to the issue; a refusal
 * answers the page that says why with the form again (`form`, filled with what was typed).
 */
function issueFormPost(
  call: Call<{ repo: string; number: number }, unknown, unknown> & { actor: Actor; repo: RepoAccess },
  title: string,
  form: (repo: string, number: number, csrf: Html, typed: Typed) => Html,
  work: (typed: Typed) => Promise<void>,
) {
  const { actor, repo, params } = call;
  const name = repo.repo.name;
  const typed = formFields(call);
  const refused = {
    title,
    form: (t: Typed) => form(name, params.number, csrfField(actor), t),
    back: { label: "Back to the issue", url: u.issueUrl(name, params.number) },
  };
  return orRefusedPage(call, typed, refused, async () => {
    await work(typed);
    return seeOther(u.issueUrl(name, params.number), 303);
  });
}

export const issuePageRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/issues",
    access: { repo: "reader" },
    summary: "Web: the repo's issues, filtered by state, label, assignee and author",
    params: repoParams,
    query: listQuery,
    responses: HTML,
    handler: async ({ ctx, actor, repo, query }) =>
      htmlReply(await issuesPage(ctx, actor, repo, query, csrfField(actor))),
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/issues",
    access: { repo: "writer" },
    summary: "Web: open an issue (form post)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const typed = formFields(call);
      const refused = {
        title: "The issue was not opened",
        form: (t: Typed) => openIssueForm(name, csrfField(actor), t),
        back: { label: "Back to the issues", url: u.issuesUrl(name) },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const f = parseForm(typed, openFields);
        const input = parseForm(
          { title: f.title, body: f.body, labels: commaList(f.labels), assignees: commaList(f.assignees) },
          openIssueRequest,
        );
        const issue = await openIssue(ctx.pool, actor, repo, input);
        return seeOther(u.issueUrl(name, issue.number), 303);
      });
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/issues/:number",
    access: { repo: "reader" },
    summary: "Web: one issue with its comments; a proposal's number redirects to the proposal",
    params: issueParams,
    responses: { ...HTML, 302: redirect },
    handler: async ({ ctx, actor, repo, params }) => {
      try {
        return htmlReply(await issuePage(ctx, actor, repo, params.number, csrfField(actor)));
      } catch (err) {
        if (!(err instanceof DomainError) || err.code !== "ISSUE_NOT_FOUND") throw err;
        // `#n` is one sequence: a number that is no issue may be a proposal (else its 404 stands).
        const proposal = await getProposalByNumber(ctx.pool, repo, params.number).catch(() => {
          throw err;
        });
        return seeOther(u.proposalNumberUrl(repo.repo.name, proposal.number));
      }
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/issues/:number/comments",
    access: { repo: "writer" },
    summary: "Web: comment on an issue (form post)",
    params: issueParams,
    responses: { 303: redirect },
    handler: (call) =>
      issueFormPost(call, "The comment was not posted", issueCommentForm, async (typed) => {
        const { body } = parseForm(typed, z.strictObject({ ...csrfToken, body: z.string() }));
        const input = parseForm({ body }, issueCommentRequest);
        await addIssueComment(call.ctx.pool, call.actor, call.repo, call.params.number, input);
      }),
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/issues/:number/close",
    access: { repo: "writer" },
    summary: "Web: close an issue with a reason (form post; author or maintainer)",
    params: issueParams,
    responses: { 303: redirect },
    handler: (call) =>
      issueFormPost(call, "The issue was not closed", closeIssueForm, async (typed) => {
        const { reason } = parseForm(typed, z.strictObject({ ...csrfToken, reason: z.string().optional() }));
        const input = parseForm(reason ? { reason } : {}, closeIssueRequest);
        await closeIssue(call.ctx.pool, call.actor, call.repo, call.params.number, input.reason);
      }),
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/issues/:number/reopen",
    access: { repo: "writer" },
    summary: "Web: reopen a closed issue (form post; author or maintainer)",
    params: issueParams,
    responses: { 303: redirect },
    handler: (call) =>
      issueFormPost(call, "The issue was not reopened", reopenIssueForm, async (typed) => {
        parseForm(typed, z.strictObject(csrfToken));
        await reopenIssue(call.ctx.pool, call.actor, call.repo, call.params.number);
      }),
  }),
];
