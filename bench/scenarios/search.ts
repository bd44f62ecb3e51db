import type { QuireClient } from "../client.ts";
import { BULK_FILES, commit, createRepo, fixturePath } from "../fixtures.ts";
import { type Budget, type LoadResult, runLoad } from "../load.ts";
import { progress } from "../log.ts";
import type { Row } from "../report.ts";

/**
 * Search of file contents and the file finder over a 10,000-file repo (docs/search.md), as pages
 * fetched the way a browser does, beside the API tree page of the web scenario's run (the floor
 * plus one query). Target: a search page under 100 ms p50.
 */
const FILES = 10_000;
const TARGET_MS = 100;
const BUDGET: Budget = { maxRequests: 300, maxSeconds: 20 };

/** A few lines of prose per file, each file's own words in them (about 600 bytes). */
function noteText(i: number): string {
  const lines = [
    `# Note ${i}`,
    "",
    `This is note number ${i} of the handbook, in section ${i % 97}.`,
    `owner: team-${i % 13}`,
    ...Array.from(
      { length: 8 },
      (_, k) => `Line ${k}: the process for step ${(i * 7 + k) % 1000} is written here.`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

async function writeNotes(q: QuireClient, repo: string): Promise<void> {
  for (let from = 0; from < FILES; from += BULK_FILES) {
    const files = [];
    for (let i = from; i < Math.min(FILES, from + BULK_FILES); i++)
      files.push({ path: fixturePath(i), text: noteText(i) });
    await commit(q, repo, "main", `notes from ${from}`, files);
  }
}

/** The search and finder rows of the web scenario; `budget` is the HTTP floor's p50 of the same run. */
export async function measureSearch(
  q: QuireClient,
  page: (path: string) => Promise<string>,
  budget: number,
): Promise<Row[]> {
  const repo = await createRepo(q, "search");
  progress(`search: writing ${FILES} files`);
  await writeNotes(q, repo);
  const base = `/ui/repos/${repo}/-`;
  const load = (label: string, send: () => Promise<void>): Promise<LoadResult> => {
    progress(`search: ${label}`);
    return runLoad({ label, concurrency: 1, warmup: 20, ...BUDGET, send });
  };
  const apiSearch = (term: string, expected: string) =>
    load(`API search for ${term}`, async () => {
      const body = await q.get("/repos/:repo*/-/search", { params: { repo }, query: { q: term } });
      if (!body.results.some((r) => r.path.includes(expected))) throw new Error(`no ${expected} for ${term}`);
    });
  const webPage = (label: string, path: string, expected: string) =>
    load(label, async () => {
      const html = await page(path);
      if (!html.includes(expected)) throw new Error(`${path}: no ${expected} in the page`);
    });
  const row = (
    label: string,
    r: LoadResult,
    of: number,
    ofLabel: string,
    target?: string,
    met?: boolean,
  ): Row => ({
    scenario: label,
    result: `n=${r.requests}`,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    ratio: r.p50Ms / of,
    ratioOf: ofLabel,
    ...(target ? { target, met } : {}),
    errors: r.errors,
  });
  const rows: Row[] = [];
  const terms: [string, string, string][] = [
    ["1 of 10,000 files matches", "number 4242 of", "f04242.md"],
    ["every file matches (first 20)", "handbook", "docs/"],
  ];
  for (const [what, term, expected] of terms) {
    const viaApi = await apiSearch(term, expected);
    const viaWeb = await webPage(
      `web search, ${what}`,
      `${base}/search?q=${encodeURIComponent(term)}`,
      expected,
    );
    rows.push(
      row(
        `API search, ${what}`,
        viaApi,
        budget,
        "HTTP floor p50",
        `p50 < ${TARGET_MS} ms`,
        viaApi.p50Ms < TARGET_MS,
      ),
    );
    const met = viaWeb.p50Ms < TARGET_MS && viaWeb.p50Ms <= 2 * viaApi.p50Ms;
    rows.push(
      row(
        `web search page, ${what}`,
        viaWeb,
        viaApi.p50Ms,
        "its API search p50",
        `p50 < ${TARGET_MS} ms, ≤ 2x`,
        met,
      ),
    );
  }
  const finder = await webPage("web finder page", `${base}/find?q=d42f4242`, "found-paths");
  rows.push(
    row(
      "web finder page, fuzzy path (best 50 of 10,000)",
      finder,
      budget,
      "HTTP floor p50",
      `p50 < ${TARGET_MS} ms`,
      finder.p50Ms < TARGET_MS,
    ),
  );
  return rows;
}
