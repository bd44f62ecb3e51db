import type { StrictApi } from "../../cli/client/index.ts";

/**
 * Every page of the web interface in one list (docs/web.md, "Every page, every screen"), walked by
 * the page tour (test/web/tour.ts) at desktop and phone widths and measured by the web bench
 * (bench/scenarios/web.ts) against the API reads each page is built from. Adding a page is one
 * entry in TOUR_PAGES; what it needs that the shared site lacks goes in its `setup`.
 */

/** What the tour's one repo holds, built through the API by `buildTourSite`. */
export interface TourSite {
  org: string;
  /** `<org>/<name>`. */
  repo: string;
  /** A branch with a change to README.md, an open proposal, a review, a comment and a check. */
  branch: string;
  proposal: string;
  /** The proposal's number in the repo (`#1`), which its page's URL uses. */
  proposalNumber: number;
  /** The sequence of the first commit on main (a release points at it). */
  first: number;
  /** The newest sequence in the repo (any branch). */
  last: number;
  /** Ids a page's own `setup` records for its `path` and `api`. */
  extra: Record<string, string>;
}

/** One page of the tour. */
export interface TourPage {
  /** Names the screenshots (test-results/web/tour-<width>-<name>.png, docs/web/<name>.png). */
  name: string;
  /** The page's path on the built site. */
  path: (s: TourSite) => string;
  /** The status the page answers (a refusal page is a page too); 200 unless given. */
  status?: number;
  /**
   * The API reads the page is built from, as paths, fetched one after the other: the bench's yardstick
   * (a page is expected within 2x of them). Omitted only for a page with no API counterpart.
   */
  api?: (s: TourSite) => string[];
  /** The page's primary controls (a button's or link's words, a field's label) that Tab must reach. */
  controls?: string[];
  /**
   * A field that takes the focus as the page loads (the finder's), as a CSS selector: Tab then
   * starts after it, so it stands in for "Skip to content" as the first stop.
   */
  focused?: string;
  /** The page shows moments (`<time>`), which the tour checks are in the reader's time zone. */
  times?: boolean;
  /**
   * A form to fill and submit with the keyboard alone: Tab to each field (by its label) in turn,
   * replace its text with the value for this screen width, and press Enter in the last one (an
   * input, not a textarea); the browser must land on a path matching `lands`.
   */
  form?: {
    fields: [label: string, value: (width: number) => string][];
    lands: (s: TourSite, width: number) => RegExp;
  };
  /** What the page needs beyond the shared site, run once after it is built. */
  setup?: (q: StrictApi, s: TourSite) => Promise<void>;
}

const ui = (s: TourSite) => `/ui/repos/${s.repo}/-`;
const api = (s: TourSite) => `/repos/${s.repo}/-`;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A long file name, to catch a page that does not wrap or scroll it at 390 px. */
const LONG_NAME = "guides/a-rather-long-file-name-that-would-not-wrap-on-a-phone-screen-at-all.md";

/** The reads behind a branch's sections (merge status, checks, reviews, comments, diff). */
const branchReads = (s: TourSite) => [
  `${api(s)}/branch/${s.branch}/status`,
  `${api(s)}/branch/${s.branch}/checks`,
  `${api(s)}/branch/${s.branch}/reviews`,
  `${api(s)}/branch/${s.branch}/comments`,
  `${api(s)}/diff?branch=${s.branch}`,
];

export const TOUR_PAGES: TourPage[] = [
  {
    name: "home",
    controls: ["Org name", "Create org"],
    path: () => "/ui/",
    api: () => ["/orgs", "/repos"],
    times: true,
    form: { fields: [["Org name", (w) => `kb-${w}`]], lands: (_, w) => new RegExp(`^/ui/orgs/kb-${w}$`) },
  },
  {
    name: "org",
    controls: ["Repo name", "Create repo"],
    path: (s) => `/ui/orgs/${s.org}`,
    api: (s) => [`/orgs/${s.org}`, `/orgs/${s.org}/repos`],
    times: true,
    form: {
      fields: [["Repo name", (w) => `kb-${w}`]],
      lands: (s, w) => new RegExp(`^/ui/repos/${s.org}/kb-${w}/-/tree$`),
    },
  },
  {
    name: "tree",
    controls: ["Branch", "Show", "Add a file"],
    path: (s) => `${ui(s)}/tree`,
    api: (s) => [`${api(s)}/tree?limit=100`],
    form: { fields: [["Branch", (_) => "feature"]], lands: (s) => new RegExp(`^${escaped(ui(s))}/tree$`) },
  },
  {
    name: "folder",
    path: (s) => `${ui(s)}/tree/src`,
    api: (s) => [`${api(s)}/tree?limit=100`],
    times: true,
  },
  {
    name: "search",
    controls: ["Search"],
    path: (s) => `${ui(s)}/search?q=handbook`,
    api: (s) => [`${api(s)}/search?q=handbook`],
  },
  {
    name: "find",
    focused: "input[data-find-input]",
    path: (s) => `${ui(s)}/find?q=md`,
    // The finder ranks every path of the view; the API's nearest read lists them, 1,000 a page.
    api: (s) => [`${api(s)}/tree?limit=1000`],
  },
  {
    name: "file-markdown",
    controls: ["Download", "Edit or delete"],
    path: (s) => `${ui(s)}/file/README.md`,
    api: (s) => [`${api(s)}/file/README.md`, `${api(s)}/file/README.md/history?limit=50`],
    times: true,
  },
  {
    name: "file-json",
    controls: ["Download", "Edit or delete"],
    path: (s) => `${ui(s)}/file/data/settings.json`,
    api: (s) => [`${api(s)}/file/data/settings.json`, `${api(s)}/file/data/settings.json/history?limit=50`],
    times: true,
  },
  {
    name: "file-code",
    controls: ["Download", "Edit or delete"],
    path: (s) => `${ui(s)}/file/src/server.ts`,
    api: (s) => [`${api(s)}/file/src/server.ts`, `${api(s)}/file/src/server.ts/history?limit=50`],
    times: true,
  },
  {
    name: "file-long-name",
    path: (s) => `${ui(s)}/file/${LONG_NAME}`,
    api: (s) => [`${api(s)}/file/${LONG_NAME}`, `${api(s)}/file/${LONG_NAME}/history?limit=50`],
    times: true,
  },
  {
    name: "editor",
    controls: ["Content", "Commit message", "Commit", "Delete file"],
    path: (s) => `${ui(s)}/edit?branch=${s.branch}&path=README.md`,
    api: (s) => [`${api(s)}/branch/${s.branch}`, `${api(s)}/file/README.md?branch=${s.branch}`],
    form: {
      fields: [
        ["Content", (w) => `# Handbook\n\nTyped at ${w} px.\n`],
        ["Commit message", (w) => `Type the handbook at ${w} px`],
      ],
      lands: (s) => new RegExp(`^${escaped(ui(s))}/file/README\\.md$`),
    },
  },
  {
    name: "history",
    path: (s) => `${ui(s)}/history`,
    api: (s) => [`${api(s)}/branches`, `${api(s)}/chain?from=${Math.max(1, s.last - 49)}&to=${s.last}`],
  },
  {
    name: "history-of-a-file",
    path: (s) => `${ui(s)}/history?path=README.md`,
    api: (s) => [`${api(s)}/file/README.md/history?limit=50`],
    times: true,
  },
  {
    name: "compare",
    path: (s) => `${ui(s)}/compare?from=main&to=${s.branch}`,
    api: (s) => [`${api(s)}/branch/${s.branch}`, `${api(s)}/diff?branch=${s.branch}`],
  },
  {
    name: "commit",
    path: (s) => `${ui(s)}/commit/${s.first}`,
    api: (s) => [`${api(s)}/commit/${s.first}`, `${api(s)}/file/README.md?at=${s.first}`],
    times: true,
  },
  {
    name: "branches",
    controls: ["Branch name", "Create branch"],
    path: (s) => `${ui(s)}/branches`,
    api: (s) => [`${api(s)}/branches`],
    form: {
      fields: [["Branch name", (w) => `kb-${w}`]],
      lands: (s, w) => new RegExp(`^${escaped(ui(s))}/branch/kb-${w}$`),
    },
  },
  {
    name: "branch",
    controls: ["Browse files", "Submit review", "Merge into main"],
    path: (s) => `${ui(s)}/branch/${s.branch}`,
    api: (s) => [`${api(s)}/branch/${s.branch}`, ...branchReads(s)],
    times: true,
  },
  {
    name: "proposals",
    controls: ["Open proposal"],
    path: (s) => `${ui(s)}/proposals`,
    api: (s) => [`${api(s)}/proposals`],
    times: true,
    // On the branch the branches page's form made at this width, earlier in the walk.
    form: {
      fields: [
        ["Branch", (w) => `kb-${w}`],
        ["Title", (w) => `Typed at ${w} px`],
      ],
      lands: (s) => new RegExp(`^${escaped(ui(s))}/proposals/\\d+$`),
    },
  },
  {
    name: "proposal",
    controls: ["Save proposal", "Close proposal", "Submit review", "Merge into main"],
    path: (s) => `${ui(s)}/proposals/${s.proposalNumber}`,
    api: (s) => [`${api(s)}/proposals/${s.proposal}`, `${api(s)}/branch/${s.branch}`, ...branchReads(s)],
    times: true,
    form: {
      fields: [["Title", (w) => `Say who reviews releases (${w} px)`]],
      lands: (s) => new RegExp(`^${escaped(ui(s))}/proposals/${s.proposalNumber}$`),
    },
  },
  {
    name: "issues",
    controls: ["Filter", "Open issue"],
    path: (s) => `${ui(s)}/issues`,
    api: (s) => [`${api(s)}/issues`],
    times: true,
    form: {
      fields: [["Title", (w) => `Typed at ${w} px`]],
      lands: (s) => new RegExp(`^${escaped(ui(s))}/issues/\\d+$`),
    },
  },
  {
    name: "issue",
    controls: ["Close issue"],
    path: (s) => `${ui(s)}/issues/${s.extra["issue"]}`,
    api: (s) => {
      const n = s.extra["issue"];
      return [`${api(s)}/issues/${n}`, `${api(s)}/issues/${n}/comments`, `${api(s)}/issues/${n}/refs`];
    },
    times: true,
    setup: async (q, s) => {
      const issue = await q.post("/repos/:repo*/-/issues", {
        params: { repo: s.repo },
        body: {
          title: "Say who reviews releases",
          body: "The README should **name** them; see #1.",
          labels: ["docs"],
          assignees: ["ann@example.com"],
        },
      });
      await q.post("/repos/:repo*/-/issues/:number/comments", {
        params: { repo: s.repo, number: String(issue.number) },
        body: { body: `Proposal #${s.proposalNumber} does it.` },
      });
      s.extra["issue"] = String(issue.number);
    },
  },
  {
    name: "releases",
    path: (s) => `${ui(s)}/releases`,
    api: (s) => [`${api(s)}/releases`],
    times: true,
  },
  {
    name: "members",
    path: (s) => `${ui(s)}/members`,
    // An org owner's page: the repo's grants, and the org's members and pending invitations.
    api: (s) => [`${api(s)}/roles`, `/orgs/${s.org}/members`, `/orgs/${s.org}/invites`],
    times: true,
  },
  {
    name: "ci-runs",
    controls: ["Run CI"],
    path: (s) => `${ui(s)}/ci`,
    // No API lists runs; the nearest read is one run's.
    api: (s) => [`/run/${s.extra["run"]}`],
    times: true,
    setup: async (q, s) => {
      s.extra["run"] = (
        await q.post("/repos/:repo*/-/ci/run", { params: { repo: s.repo }, body: { branch: "main" } })
      ).run_id;
    },
  },
  {
    name: "ci-run",
    path: (s) => `${ui(s)}/ci/${s.extra["run"]}`,
    api: (s) => [`/run/${s.extra["run"]}`],
    times: true,
  },
  {
    name: "check-history",
    path: (s) => `${ui(s)}/ci/checks/lint?branch=${s.branch}`,
    api: (s) => [`${api(s)}/branch/${s.branch}/checks`],
  },
  {
    name: "secrets",
    controls: ["Name", "Value"],
    path: (s) => `${ui(s)}/secrets`,
    api: (s) => [`${api(s)}/secrets`],
    times: true,
    setup: async (q, s) => {
      await q.put("/repos/:repo*/-/secrets/:secret", {
        params: { repo: s.repo, secret: "DEPLOY_TOKEN" },
        body: { value: "tour-value", description: "Publishes the handbook" },
      });
    },
  },
  {
    name: "not-found",
    controls: ["All orgs and repos"],
    path: (s) => `${ui(s)}/file/no/such/file.md`,
    status: 404,
    api: (s) => [`${api(s)}/file/no/such/file.md`],
  },
];

const base64 = (text: string) => Buffer.from(text).toString("base64");

/** One commit of text files on `branch` through the API; answers its sequence. */
async function commitFiles(
  q: StrictApi,
  repo: string,
  branch: string,
  message: string,
  files: Record<string, string>,
): Promise<number> {
  const changes = Object.entries(files).map(([path, text]) => ({ path, content: base64(text) }));
  const res = await q.post("/repos/:repo*/-/commit", {
    params: { repo },
    body: { branch, message, files: changes },
  });
  return res.sequence;
}

const README = `# Handbook

How this team writes things down. Read [the guide](${LONG_NAME}) first, then the settings in
[data/settings.json](data/settings.json).

| section | owner | reviewed |
|---|---|---|
| onboarding | people team | every quarter |
| releases | maintainers | every release |

\`\`\`sh
quire clone acme/handbook && cd handbook && quire status --long --show-every-column-you-have
\`\`\`
`;

/** One check, run by hand only: the CI pages have a run to show (queued: the tour runs no worker). */
const CI_YAML = `on:
  push:
    branches: [nothing]
checks:
  - name: lint
    image: alpine:3.20
    steps:
      - echo lint
`;

const SERVER = `import http from "node:http";

/** Answers every request with the time; a long line follows, to scroll inside its own box. */
export function serve(port: number): http.Server {
  return http.createServer((_req, res) => res.end(new Date().toISOString() + ": the time, and the rest of a rather long line of code")).listen(port);
}
`;

/**
 * The tour's site, built through the API as `q`'s identity (who owns the org): an org and a repo
 * with Markdown, JSON, code and a long file name on main, a release, a writer's role, and a branch
 * with an open proposal, a review, a comment and a check run. `bulk` adds files to main right
 * after the repo is made (the bench's 2,000-file tree).
 */
export async function buildTourSite(
  q: StrictApi,
  opts: { org?: string; name?: string; bulk?: (repo: string) => Promise<void> } = {},
): Promise<TourSite> {
  const org = opts.org ?? "acme";
  const repo = `${org}/${opts.name ?? "handbook"}`;
  await q.post("/orgs", { body: { name: org } });
  await q.post("/repos", { body: { owner: org, name: repo } });
  await opts.bulk?.(repo);
  const first = await commitFiles(q, repo, "main", "Start the handbook", {
    "README.md": README,
    ".svc/ci.yaml": CI_YAML,
    "data/settings.json": JSON.stringify({ review: { required: 1, teams: ["docs", "platform"] } }),
    "src/server.ts": SERVER,
    [LONG_NAME]: `# Guide\n\n${"Write short sentences. ".repeat(30)}\n`,
  });
  await commitFiles(q, repo, "main", "Tighten the guide", {
    [LONG_NAME]: "# Guide\n\nWrite short sentences.\n",
  });
  await q.post("/repos/:repo*/-/releases", {
    params: { repo },
    body: { name: "v1", sequence: first, notes: "The first cut" },
  });
  await q.put("/repos/:repo*/-/roles/:identity", {
    params: { repo, identity: "writer@acme.test" },
    body: { role: "writer" },
  });
  const branch = "feature";
  await q.post("/repos/:repo*/-/branch", { params: { repo }, body: { name: branch } });
  const last = await commitFiles(q, repo, branch, "Say who reviews", {
    "README.md": README.replace("every release", "every release, by two people"),
  });
  const proposal = await q.post("/repos/:repo*/-/proposals", {
    params: { repo },
    body: { branch, title: "Say who reviews releases", description: "Two people, not one." },
  });
  await q.post("/repos/:repo*/-/review", {
    params: { repo },
    body: { branch, status: "rejected", body: "Name the two people." },
  });
  await q.post("/repos/:repo*/-/comment", {
    params: { repo },
    body: { branch, path: "README.md", body: "Which two?" },
  });
  await q.post("/repos/:repo*/-/check", {
    params: { repo },
    body: { branch, check_name: "lint", status: "passed", log_url: "https://ci.example.com/runs/1" },
  });
  const site: TourSite = {
    org,
    repo,
    branch,
    proposal: proposal.id,
    proposalNumber: proposal.number,
    first,
    last,
    extra: {},
  };
  for (const p of TOUR_PAGES) await p.setup?.(q, site);
  return site;
}
