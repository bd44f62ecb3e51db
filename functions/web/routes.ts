import type { IncomingHttpHeaders } from "node:http";
import { z } from "zod";
import type { RepoAccess } from "../../shared/access/roles.ts";
import { branchName, filePath, sequenceParam } from "../../shared/api/names.ts";
import type { Actor } from "../../shared/auth/actor.ts";
import type { AppContext } from "../../shared/context.ts";
import { DomainError, fail } from "../../shared/errors.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { type AnyRoute, type Call, type Reply, route } from "../../shared/http/route.ts";
import { bodyText } from "../../shared/http/text.ts";
import { mergeBranch } from "../../shared/merge/merge.ts";
import type { PolicyResult } from "../../shared/policy/engine.ts";
import { proposalStates } from "../../shared/proposals/api.ts";
import { listProposals } from "../../shared/proposals/proposals.ts";
import {
  MAX_REVIEW_BODY,
  type ReviewStatus,
  reviewStatuses,
  submitReview,
} from "../../shared/reviews/reviews.ts";
import { assets } from "./assets.ts";
import { autoMergeRoutes } from "./auto-merge-routes.ts";
import { ciRoutes } from "./ci-routes.ts";
import { codeRoutes, downloadReply } from "./code-routes.ts";
import { commitRoutes } from "./commit-routes.ts";
import { createRoutes } from "./create-routes.ts";
import { csrfField } from "./csrf.ts";
import { devIdentityRoute } from "./dev-identity.ts";
import { discussionRoutes } from "./discussion-routes.ts";
import { csrfToken, formFields, parseForm, wantsHtml } from "./forms.ts";
import { html } from "./html.ts";
import { issuePageRoutes } from "./issue-routes.ts";
import { page, repoCrumbs } from "./layout.ts";
import { memberRoutes } from "./member-routes.ts";
import { commitPage, fileBytes, filePage, fileShows } from "./pages/content.ts";
import { diffLayoutParam } from "./pages/diff.ts";
import { homePage, orgPage, releasesPage } from "./pages/directory.ts";
import { highlighter } from "./pages/highlight.ts";
import { markdownIt } from "./pages/markdown.ts";
import { membersPage } from "./pages/members.ts";
import {
  branchesPage,
  branchPage,
  proposalsPage,
  type Refusal,
  refusedOnBranchPage,
} from "./pages/review.ts";
import { proposalRoutes } from "./proposal-routes.ts";
import { assetReply, htmlReply, SECURITY_HEADERS, seeOther } from "./reply.ts";
import { searchRoutes } from "./search-routes.ts";
import { secretPageRoutes } from "./secrets-routes.ts";
import { treeRoutes } from "./tree-routes.ts";
import * as u from "./urls.ts";

/**
 * The web interface (docs/web.md): server-rendered pages under `/ui/`, each built from the same
 * domain functions (shared/) the API's handlers call, with the same access rules, never by
 * calling the API over HTTP. Form posts (review, merge) go through the same operations as the
 * API's and answer with a redirect, or with the page showing why the operation was refused.
 */

const HTML = { 200: bytes("text/html") };
const repoParams = z.object({ repo: z.string() });
const branchParams = z.object({ repo: z.string(), branch: branchName });
const fileParams = z.object({ repo: z.string(), path: filePath });
const onBranch = branchName.default("main");
/** A diff's layout (functions/web/pages/diff.ts): unified unless the page asks for split. */

/** The repo a page path is about (`/ui/repos/{org}/{name}/…`), to keep its breadcrumb on a refusal. */
function repoOfPath(path: string): string | undefined {
  const m = /^\/ui\/repos\/([^/]+)\/([^/]+)(?:\/|$)/.exec(path);
  if (!m?.[1] || !m[2] || m[2] === "-") return undefined;
  try {
    return `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`;
  } catch {
    return undefined;
  }
}

/** The page the reader came from, if it is one of this site's pages (same host), to link back to. */
function referringPage(headers: IncomingHttpHeaders): string | undefined {
  try {
    const from = new URL(String(headers.referer ?? ""));
    return from.host === headers.host && from.pathname.startsWith("/ui/")
      ? from.pathname + from.search
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An error page in the shape of the site, with the error's status and words; inside a repo it
 * keeps the repo's breadcrumb, and it always offers a way back (the referring page, the repo).
 */
function errorPage(actor: Actor | null, err: DomainError, path: string, headers: IncomingHttpHeaders): Reply {
  const repo = repoOfPath(path);
  const back = referringPage(headers);
  const body = html`<h1>${err.status === 404 ? "Not found" : "Something is wrong"}</h1><p role="alert">${err.message}</p><p class="muted">${err.code}</p>
<ul class="way-back">${back ? html`<li><a href="${back}" id="back-link">Back to the previous page</a></li>` : ""}
${repo ? html`<li><a href="${u.repoUrl(repo)}" id="repo-link">Back to ${repo}</a></li>` : ""}
<li><a href="${u.orgsUrl()}">All orgs and repos</a></li></ul>`;
  const crumbs = repo ? repoCrumbs(repo) : undefined;
  return htmlReply(page({ title: err.code, actor, body, ...(crumbs ? { crumbs } : {}) }), err.status);
}

/**
 * Every web route shows a refusal to a browser as a page of the site, whether it arose in access
 * (no such repo, no role), in the input or in the page itself; a client that does not ask for
 * HTML gets the API's JSON error instead. Its handler runs once the libraries the pages render
 * code and Markdown with are loaded: the first page of a process imports them, so a server that
 * shows no page never holds them (docs/benchmarks.md, "Where the memory goes").
 */
function withErrorPages<R extends AnyRoute>(r: R): R {
  return {
    ...r,
    handler: async (call) => {
      await Promise.all([highlighter.load(), markdownIt.load()]);
      return r.handler(call);
    },
    section: { headers: SECURITY_HEADERS, answersHead: true },
    errorPage: (
      err: DomainError,
      call: { actor: Actor | null; headers: IncomingHttpHeaders; path: string },
    ) => (wantsHtml(call.headers) ? errorPage(call.actor, err, call.path, call.headers) : undefined),
  };
}

/** A form post's fields (application/x-www-form-urlencoded), validated like any other input. */
const formOf = <S extends z.ZodType>(call: Call<unknown, unknown, unknown>, schema: S): z.output<S> =>
  parseForm(formFields(call), schema);

const reviewForm = z.strictObject({
  ...csrfToken,
  status: z.enum(reviewStatuses),
  body: z.string().max(MAX_REVIEW_BODY).default(""),
});
const mergeForm = z.strictObject(csrfToken);

/** What a refused review form held, read leniently so it can be shown again as typed. */
function typedReview(call: Call<unknown, unknown, unknown>): { status?: ReviewStatus; body: string } {
  const fields = new URLSearchParams(call.rawBody ? bodyText(call.rawBody) : "");
  const status = fields.get("status");
  const body = (fields.get("body") ?? "").slice(0, MAX_REVIEW_BODY);
  return status === "approved" || status === "rejected" ? { status, body } : { body };
}

/** Where the review and merge forms return: the branch's open proposal if it has one, else the branch. */
async function reviewHome(ctx: AppContext, access: RepoAccess, branch: string): Promise<string | undefined> {
  const [open] = await listProposals(ctx.pool, access, { state: "open", branch });
  return open?.id;
}

function refusalOf(err: DomainError): Refusal | null {
  if (
    !["POLICY_DENIED", "MERGE_CONFLICT", "BRANCH_DRAFT", "BRANCH_NOT_ACTIVE", "FORBIDDEN"].includes(err.code)
  )
    return null;
  const refusal: Refusal = { message: err.message };
  if (err.details?.["policies"]) refusal.policies = err.details["policies"] as PolicyResult[];
  if (err.details?.["conflicts"])
    refusal.conflicts = err.details["conflicts"] as NonNullable<Refusal["conflicts"]>;
  return refusal;
}

const repoPages = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*",
    access: { repo: "reader" },
    summary: "Web: a repo's files at the head of main",
    params: repoParams,
    responses: { 302: redirect },
    handler: async ({ repo }) => seeOther(u.treeUrl(repo.repo.name)),
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/file/:path*",
    access: { repo: "reader" },
    summary: "Web: a file at a branch and sequence, with its history",
    params: fileParams,
    query: z.strictObject({
      branch: onBranch,
      at: sequenceParam.optional(),
      show: z.enum(fileShows).optional(),
    }),
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, repo, params, query } = call;
      return htmlReply(await filePage(ctx, actor, repo, { ...query, path: params.path }));
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/raw/:path*",
    access: { repo: "reader" },
    summary: "Web: a file's bytes as a download",
    params: fileParams,
    query: z.strictObject({ branch: onBranch, at: sequenceParam.optional() }),
    responses: { 200: bytes("application/octet-stream") },
    handler: async ({ ctx, repo, params, query }) => {
      const file = await fileBytes(ctx, repo, { ...query, path: params.path });
      // Always a download, never rendered here: an HTML file in a repo must not run as this site.
      return downloadReply(params.path, file.data);
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/commit/:sequence",
    access: { repo: "reader" },
    summary: "Web: a commit with its diff",
    params: z.object({ repo: z.string(), sequence: sequenceParam }),
    query: z.strictObject({ view: diffLayoutParam, file: filePath.optional() }),
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, repo, params, query } = call;
      return htmlReply(await commitPage(ctx, actor, repo, { ...query, sequence: params.sequence }));
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/branches",
    access: { repo: "reader" },
    summary: "Web: a repo's active branches",
    params: repoParams,
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      return htmlReply(await branchesPage(ctx, actor, repo, csrfField(actor)));
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/branch/:branch*",
    access: { repo: "reader" },
    summary: "Web: a branch with its merge status, checks, reviews, comments and diff",
    params: branchParams,
    query: z.strictObject({ view: diffLayoutParam }),
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, repo, params, query } = call;
      const csrf = csrfField(actor);
      return htmlReply(await branchPage(ctx, actor, repo, params.branch, csrf, {}, query.view));
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/branch/:branch*/review",
    access: { repo: "writer" },
    summary: "Web: submit a review of a branch (form post)",
    params: branchParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params } = call;
      const proposal = await reviewHome(ctx, repo, params.branch);
      try {
        const form = formOf(call, reviewForm);
        await submitReview(ctx.pool, actor, repo, {
          branch: params.branch,
          status: form.status,
          body: form.body,
        });
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500 || !wantsHtml(call.headers)) throw err;
        // The page again, with what was typed and why it was refused, instead of a dead end.
        const draft = { message: err.message, ...typedReview(call) };
        const where = { branch: params.branch, proposalId: proposal };
        return htmlReply(await refusedOnBranchPage(ctx, actor, repo, where, { draft }), err.status);
      }
      return seeOther(
        proposal ? u.proposalUrl(repo.repo.name, proposal) : u.branchUrl(repo.repo.name, params.branch),
        303,
      );
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/branch/:branch*/merge",
    access: { repo: "maintainer" },
    summary: "Web: merge a branch into main (form post), or show why it is refused",
    params: branchParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo, params } = call;
      formOf(call, mergeForm);
      const proposal = await reviewHome(ctx, repo, params.branch);
      try {
        const merged = await mergeBranch(ctx, actor, repo, params.branch);
        return seeOther(
          merged.proposal_id
            ? u.proposalUrl(repo.repo.name, merged.proposal_id)
            : u.commitUrl(repo.repo.name, merged.sequence),
          303,
        );
      } catch (err) {
        const refusal = err instanceof DomainError ? refusalOf(err) : null;
        if (!refusal || !(err instanceof DomainError)) throw err;
        const where = { branch: params.branch, proposalId: proposal };
        return htmlReply(await refusedOnBranchPage(ctx, actor, repo, where, { refusal }), err.status);
      }
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/proposals",
    access: { repo: "reader" },
    summary: "Web: a repo's proposals",
    params: repoParams,
    query: z.strictObject({ state: z.enum(proposalStates).optional() }),
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, repo, query } = call;
      return htmlReply(await proposalsPage(ctx, actor, repo, query.state, csrfField(actor)));
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/releases",
    access: { repo: "reader" },
    summary: "Web: a repo's releases",
    params: repoParams,
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      return htmlReply(await releasesPage(ctx, actor, repo));
    },
  }),
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/members",
    access: { repo: "admin" },
    summary: "Web: a repo's role grants and its org's members, with the forms that change them (admins)",
    params: repoParams,
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      return htmlReply(await membersPage(ctx, actor, repo, csrfField(actor)));
    },
  }),
];

export const webRoutes = [
  route({
    method: "GET",
    path: "/",
    access: "public",
    summary: "Web: the start page is the web interface's",
    responses: { 302: redirect },
    handler: async () => seeOther(u.orgsUrl()),
  }),
  route({
    method: "GET",
    path: "/ui",
    access: "user",
    summary: "Web: the orgs and repos the caller can see",
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor } = call;
      return htmlReply(await homePage(ctx, actor, csrfField(actor)));
    },
  }),
  route({
    method: "GET",
    path: "/ui/orgs/:org",
    access: "user",
    summary: "Web: an org's repos",
    params: z.object({ org: z.string() }),
    responses: HTML,
    handler: async (call) => {
      const { ctx, actor, params } = call;
      return htmlReply(await orgPage(ctx, actor, params.org, csrfField(actor)));
    },
  }),
  route({
    method: "GET",
    path: "/ui/static/:hash/:name",
    access: "public",
    summary: "Web: the stylesheet and the live script (content-addressed, cached for good)",
    params: z.object({ hash: z.string(), name: z.string() }),
    responses: { 200: bytes("text/") },
    handler: async ({ params }) => {
      const found = assets.find((a) => a.path === `/ui/static/${params.hash}/${params.name}`);
      if (!found) fail("NOT_FOUND", "no such static file");
      return assetReply(found);
    },
  }),
  devIdentityRoute,
  ...createRoutes,
  ...commitRoutes,
  ...proposalRoutes,
  ...autoMergeRoutes,
  ...codeRoutes,
  ...discussionRoutes,
  ...searchRoutes,
  ...treeRoutes,
  ...secretPageRoutes,
  ...issuePageRoutes,
  ...repoPages,
  ...ciRoutes,
  ...memberRoutes,
].map(withErrorPages);
