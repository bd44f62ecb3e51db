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

export const rawUrl = (repo: string, path: string, q: { branch: string; at: number }) =>
  withQuery(`${repoBase(repo)}/-/raw/${segments(path)}`, q);

export const commitUrl = (repo: string, sequence: number) => `${repoBase(repo)}/-/commit/${sequence}`;
export const historyUrl = (repo: string, q: { before?: number } = {}) =>
  withQuery(`${repoBase(repo)}/-/history`, { before: q.before });
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
// Repo secrets (functions/web/secrets-routes.ts).
export const secretsUrl = (repo: string) => `${repoBase(repo)}/-/secrets`;
export const secretDeleteUrl = (repo: string, name: string) => `${secretsUrl(repo)}/${name}/delete`;
