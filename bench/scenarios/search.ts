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

/** The search and finder rows of the web scenario; `budget` is the API tree page's p50. */
export async function measureSearch(
  q: QuireClient,
  page: (path: string) => Promise<string>,
  budget: number,
): Promise<Row[]> {
  const repo = await createRepo(q, "search");
  progress(`search: writing ${FILES} files`);
  await writeNotes(q, repo);
  const base = `/ui/repos/${repo}/-`;
  const cases: [string, string, string][] = [
    ["web search page, 1 of 10,000 files matches", `${base}/search?q=number+4242+of`, "f04242.md"],
    ["web search page, every file matches (first 20)", `${base}/search?q=handbook`, "Next page"],
    ["web finder page, fuzzy path (best 50 of 10,000)", `${base}/find?q=d42f4242`, "found-paths"],
  ];
  const rows: Row[] = [];
  for (const [label, path, expected] of cases) {
    progress(`search: ${label}`);
    const r: LoadResult = await runLoad({
      label,
      concurrency: 1,
      warmup: 20,
      ...BUDGET,
      send: async () => {
        const html = await page(path);
        if (!html.includes(expected)) throw new Error(`${path}: no ${expected} in the page`);
      },
    });
    rows.push({
      scenario: label,
      result: `n=${r.requests}`,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      ratio: r.p50Ms / budget,
      ratioOf: "API tree page p50",
      target: `p50 < ${TARGET_MS} ms`,
      met: r.p50Ms < TARGET_MS,
      errors: r.errors,
    });
  }
  return rows;
}
