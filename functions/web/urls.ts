/** Links between pages. Every segment of a name is percent-encoded; the `/` between segments is kept. */
const segments = (name: string) => name.split("/").map(encodeURIComponent).join("/");

function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export const orgsUrl = () => "/ui/";
/** Development mode's identity switcher posts here (functions/web/dev-identity.ts). */
export const devIdentityUrl = () => "/ui/dev/identity";
export const orgUrl = (org: string) => `/ui/orgs/${encodeURIComponent(org)}`;
export const createOrgUrl = () => "/ui/orgs";
export const createRepoUrl = (org: string) => `${orgUrl(org)}/repos`;

const repoBase = (repo: string) => `/ui/repos/${segments(repo)}`;
export const repoUrl = (repo: string) => repoBase(repo);

export const treeUrl = (repo: string, q: { branch?: string; at?: number; after?: string } = {}) =>
  withQuery(`${repoBase(repo)}/-/tree`, {
    branch: q.branch === "main" ? undefined : q.branch,
    at: q.at,
    after: q.after,
  });

export const fileUrl = (repo: string, path: string, q: { branch?: string; at?: number } = {}) =>
  withQuery(`${repoBase(repo)}/-/file/${segments(path)}`, {
    branch: q.branch === "main" ? undefined : q.branch,
    at: q.at,
  });

export const rawUrl = (repo: string, path: string, q: { branch: string; at?: number | undefined }) =>
  withQuery(`${repoBase(repo)}/-/raw/${segments(path)}`, q);

export const commitUrl = (repo: string, sequence: number) => `${repoBase(repo)}/-/commit/${sequence}`;
export const historyUrl = (
  repo: string,
  q: { before?: number; branch?: string | undefined; path?: string | undefined } = {},
) => withQuery(`${repoBase(repo)}/-/history`, { branch: q.branch, path: q.path, before: q.before });
export const branchesUrl = (repo: string) => `${repoBase(repo)}/-/branches`;
export const createBranchUrl = (repo: string) => branchesUrl(repo);
export const editUrl = (repo: string, q: { branch: string; path?: string | undefined }) =>
  withQuery(`${repoBase(repo)}/-/edit`, q);
export const commitFormUrl = (repo: string) => `${repoBase(repo)}/-/commit`;
export const branchUrl = (repo: string, branch: string) => `${repoBase(repo)}/-/branch/${segments(branch)}`;
export const mergeUrl = (repo: string, branch: string) => `${branchUrl(repo, branch)}/merge`;
export const reviewUrl = (repo: string, branch: string) => `${branchUrl(repo, branch)}/review`;
export const proposalsUrl = (repo: string) => `${repoBase(repo)}/-/proposals`;
export const proposalUrl = (repo: string, id: string) => `${repoBase(repo)}/-/proposals/${id}`;
export const proposalEditUrl = (repo: string, id: string) => `${proposalUrl(repo, id)}/edit`;
export const proposalCloseUrl = (repo: string, id: string) => `${proposalUrl(repo, id)}/close`;
export const releasesUrl = (repo: string) => `${repoBase(repo)}/-/releases`;
export const membersUrl = (repo: string) => `${repoBase(repo)}/-/members`;
/** The API's log of a check run is a URL the reporter gave; only http(s) ones are linked. */
export const safeLink = (url: string | null): string | null =>
  url && /^https?:\/\//i.test(url) ? url : null;

// Code and diffs (functions/web/pages/diff.ts, code-routes.ts).

/** `url` with these query parameters set (a value) or removed (undefined), the others kept. */
export function withParams(url: string, params: Record<string, string | undefined>): string {
  const parsed = new URL(url, "http://page.invalid");
  for (const [k, v] of Object.entries(params))
    if (v === undefined) parsed.searchParams.delete(k);
    else parsed.searchParams.set(k, v);
  return parsed.pathname + parsed.search;
}

/** A file's text shown by the browser as plain text (the "Raw" link; `rawUrl` is the download). */
export const plainUrl = (repo: string, path: string, q: { branch: string; at: number }) =>
  withQuery(`${repoBase(repo)}/-/plain/${segments(path)}`, q);

/** A commit's page in a diff layout, or showing one file's whole diff. */
export const commitViewUrl = (repo: string, sequence: number, q: { view?: string; file?: string }) =>
  withQuery(commitUrl(repo, sequence), { view: q.view === "unified" ? undefined : q.view, file: q.file });
/** A proposal's page by its number in the repo (`#12`); the UUID URL redirects here. */
export const proposalNumberUrl = (repo: string, number: number) => `${repoBase(repo)}/-/proposals/${number}`;
/** Comments and replies on a branch's files are posted here (functions/web/discussion-routes.ts). */
export const commentPostUrl = (repo: string, branch: string) => `${branchUrl(repo, branch)}/comment`;
export const commentAnchor = (id: string) => `comment-${id}`;
/** The `.tar.gz` of the tree at a branch and sequence, under the reader's own access. */
export const archiveUrl = (repo: string, q: { branch: string; at: number }) =>
  withQuery(`${repoBase(repo)}/-/archive`, q);
/** Search of file contents at a view (functions/web/search-routes.ts). */
export const searchUrl = (
  repo: string,
  q: { q?: string; branch?: string; at?: number | undefined; after?: string | undefined } = {},
) =>
  withQuery(`${repoBase(repo)}/-/search`, {
    q: q.q,
    branch: q.branch === "main" ? undefined : q.branch,
    at: q.at,
    after: q.after,
  });
/** The file finder at a view (GitHub's `t`). */
export const findUrl = (repo: string, q: { q?: string; branch?: string; at?: number | undefined } = {}) =>
  withQuery(`${repoBase(repo)}/-/find`, {
    q: q.q,
    branch: q.branch === "main" ? undefined : q.branch,
    at: q.at,
  });
// Finding one's way (folder view, compare): docs/web.md.
/** A folder of the tree at a branch and sequence ("" is the root: the tree page itself). */
export const folderUrl = (
  repo: string,
  folder: string,
  q: { branch?: string; at?: number; after?: string } = {},
) =>
  folder === ""
    ? treeUrl(repo, q)
    : withQuery(`${repoBase(repo)}/-/tree/${segments(folder)}`, {
        branch: q.branch === "main" ? undefined : q.branch,
        at: q.at,
        after: q.after,
      });
export const compareUrl = (repo: string, q: { from?: string; to?: string } = {}) =>
  withQuery(`${repoBase(repo)}/-/compare`, q);
// CI (functions/web/ci-routes.ts).
export const ciUrl = (repo: string, q: { before?: string } = {}) =>
  withQuery(`${repoBase(repo)}/-/ci`, { before: q.before });
export const runUrl = (repo: string, run: string) => `${repoBase(repo)}/-/ci/${run}`;
export const runLogUrl = (repo: string, run: string, check: string, q: { start?: number; before?: number }) =>
  withQuery(`${runUrl(repo, run)}/log/${segments(check)}`, { start: q.start, before: q.before });
export const runRawLogUrl = (repo: string, run: string, check: string) =>
  `${runUrl(repo, run)}/raw/${segments(check)}`;
export const checkHistoryUrl = (repo: string, check: string, q: { branch?: string; before?: number } = {}) =>
  withQuery(`${repoBase(repo)}/-/ci/checks/${segments(check)}`, {
    branch: q.branch === "main" ? undefined : q.branch,
    before: q.before,
  });
// Members and roles (functions/web/member-routes.ts).
export const repoRoleFormUrl = (repo: string) => `${membersUrl(repo)}/roles`;
export const orgMemberFormUrl = (repo: string) => `${membersUrl(repo)}/org`;
export const inviteFormUrl = (repo: string) => `${membersUrl(repo)}/invites`;
export const acceptInviteUrl = (id: string) => `/ui/invites/${encodeURIComponent(id)}/accept`;
// Repo secrets (functions/web/secrets-routes.ts).
export const secretsUrl = (repo: string) => `${repoBase(repo)}/-/secrets`;
export const secretDeleteUrl = (repo: string, name: string) => `${secretsUrl(repo)}/${name}/delete`;
/** A running check's log after a byte offset, for the run page's script (log streaming). */
export const runLogTailUrl = (repo: string, run: string, check: string) =>
  `${runUrl(repo, run)}/tail/${segments(check)}`;
// Auto-merge (functions/web/auto-merge-routes.ts).
export const autoMergeUrl = (repo: string, branch: string) => `${branchUrl(repo, branch)}/auto-merge`;
// Issues (functions/web/issue-routes.ts).
export const issuesUrl = (
  repo: string,
  q: { state?: string; label?: string; assignee?: string; author?: string; before?: number } = {},
) => withQuery(`${repoBase(repo)}/-/issues`, q);
export const issueUrl = (repo: string, number: number) => `${repoBase(repo)}/-/issues/${number}`;
export const issueCommentsUrl = (repo: string, number: number) => `${issueUrl(repo, number)}/comments`;
export const issueCloseUrl = (repo: string, number: number) => `${issueUrl(repo, number)}/close`;
export const issueReopenUrl = (repo: string, number: number) => `${issueUrl(repo, number)}/reopen`;
