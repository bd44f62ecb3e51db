import type { RepoAccess } from "../../shared/access/roles.ts";
import type { Actor } from "../../shared/auth/actor.ts";
import { CSRF_FIELD } from "../../shared/auth/csrf.ts";
import type { DevActorInfo } from "../../shared/auth/dev-identity.ts";
import { liveScript, styles } from "./assets.ts";
import { csrfField } from "./csrf.ts";
import { Html, html } from "./html.ts";
import { type PageView, searchBox } from "./search-box.ts";
import * as u from "./urls.ts";

export type RepoTab =
  | "tree"
  | "history"
  | "branches"
  | "proposals"
  | "issues"
  | "releases"
  | "members"
  | "ci"
  | "secrets";

export interface PageInput {
  title: string;
  actor: Actor | null;
  /** The repo the page is about: its navigation, and the live script's stream. */
  repo?: RepoAccess;
  tab?: RepoTab;
  /** A branch whose events refresh the page's live regions (needs `repo` and `liveSrc`). */
  liveBranch?: string;
  /** The URL the live script re-fetches the page from (not the URL of a form post it answers). */
  liveSrc?: string;
  /** The branch and sequence a repo page shows: its search box searches there. */
  view?: PageView;
  /** Breadcrumbs above the heading: [label, href] pairs, the last one the current page. */
  crumbs?: [string, string][];
  body: Html;
}

function repoNav(access: RepoAccess, tab: RepoTab | undefined): Html {
  const name = access.repo.name;
  const tabs: [RepoTab, string, string][] = [
    ["tree", "Files", u.treeUrl(name)],
    ["history", "History", u.historyUrl(name)],
    ["branches", "Branches", u.branchesUrl(name)],
    ["proposals", "Proposals", u.proposalsUrl(name)],
    ["issues", "Issues", u.issuesUrl(name)],
    ["releases", "Releases", u.releasesUrl(name)],
    ["ci", "CI", u.ciUrl(name)],
  ];
  if (access.role === "admin") tabs.push(["members", "Members", u.membersUrl(name)]);
  if (access.role === "admin") tabs.push(["secrets", "Secrets", u.secretsUrl(name)]);
  return html`<nav class="repo" aria-label="Repository"><ul>${tabs.map(
    ([id, label, href]) =>
      html`<li><a href="${href}"${id === tab ? new Html(' aria-current="page"') : ""}>${label}</a></li>`,
  )}</ul></nav>`;
}

function crumbsNav(crumbs: [string, string][]): Html {
  return html`<nav class="crumbs" aria-label="Breadcrumbs"><ol>${crumbs.map(([label, href], i) =>
    i === crumbs.length - 1
      ? html`<li><a href="${href}" aria-current="page">${label}</a></li>`
      : html`<li><a href="${href}">${label}</a></li>`,
  )}</ol></nav>`;
}

/**
 * Development mode with several identities (DEV_IDENTITIES): a form to act as another of them.
 * It posts to a development-only route that sets a cookie; no script (the CSP allows none inline).
 */
function devSwitcher(current: string, dev: DevActorInfo): Html | "" {
  if (dev.identities.length < 2) return "";
  return html`<form class="inline dev-as" method="post" action="${u.devIdentityUrl()}">
<input type="hidden" name="${CSRF_FIELD}" value="${dev.csrfToken}">
<label for="dev-as">Act as</label>
<select id="dev-as" name="identity">${dev.identities.map(
    (d) => html`<option value="${d}"${d === current ? new Html(" selected") : ""}>${d}</option>`,
  )}</select>
<button type="submit">Switch</button>
</form>`;
}

/**
 * Every table in a container of its own that scrolls sideways, so a wide table on a narrow screen
 * scrolls inside itself instead of the page. Only markup the service made can hold `<table`
 * (interpolated text is escaped, Markdown's raw HTML is off), so this never touches content.
 */
function withScrollingTables(body: Html): Html {
  return new Html(
    body.text.replace(/<table\b/g, '<div class="scroll"><table').replace(/<\/table>/g, "</table></div>"),
  );
}

/**
 * The page shell: landmarks, a skip link, the stylesheet and the script (local times; on a repo's pages live
 * updates where the page names a branch, the branch picker's suggestions).
 */
export function page(p: PageInput): Html {
  const live = p.repo && p.liveBranch !== undefined;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${p.title} · Quire</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${styles.path}">
<script src="${liveScript.path}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
<a class="brand" href="${u.orgsUrl()}">Quire</a>
${p.actor ? html`<span class="who">Signed in as ${p.actor.identity}</span>` : ""}
${p.actor?.dev ? devSwitcher(p.actor.identity, p.actor.dev) : ""}
${p.actor?.session ? html`<form class="inline" method="post" action="/auth/logout">${csrfField(p.actor)}<button type="submit">Sign out</button></form>` : ""}
</header>
<main id="main"${live ? html` data-live-repo="${p.repo?.repo.name}" data-live-branch="${p.liveBranch}" data-live-src="${p.liveSrc}"` : ""}>
${p.crumbs ? crumbsNav(p.crumbs) : ""}
${p.repo ? repoNav(p.repo, p.tab) : ""}
${p.repo ? searchBox(p.repo.repo.name, p.view) : ""}
${live ? html`<p id="live-status" class="muted" role="status" aria-live="polite">Connecting&hellip;</p>` : ""}
${withScrollingTables(p.body)}
</main>
</body>
</html>
`;
}

/** Breadcrumbs from the org to the repo. */
export function repoCrumbs(repo: string): [string, string][] {
  const org = repo.split("/")[0] ?? repo;
  return [
    ["Orgs", u.orgsUrl()],
    [org, u.orgUrl(org)],
    [repo, u.repoUrl(repo)],
  ];
}
