import http from "node:http";
import { quireClient } from "../client.ts";
import { createOrg, createRepo, fixturePath, writeTree } from "../fixtures.ts";
import { type Budget, type LoadResult, runLoad } from "../load.ts";
import { progress } from "../log.ts";
import { markdownTable, type Row } from "../report.ts";
import type { QuireProcess } from "../server.ts";
import { measureHttpFloor, PAGE } from "./reads.ts";

/**
 * The web interface's first paint (docs/web.md): a page is one server-rendered HTML document, so
 * its first paint is the time to the last byte of that document (first byte plus the HTML; the
 * stylesheet is cached for good after the first page). Measured in the same run as the HTTP floor
 * (`/healthz`) and the API's own read of the same data (one tree page: the floor plus one query),
 * so the ratio does not depend on the machine.
 */
const FILES = 2_000;
const BUDGET: Budget = { maxRequests: 300, maxSeconds: 20 };

/**
 * GET of a page as a browser asks for it, on a keep-alive socket; the whole body is read. Raw on
 * purpose, not the typed client: the UI routes answer HTML, and this measures the page's bytes as a
 * browser's request (accept: text/html) gets them.
 */
function pageGetter(baseUrl: string) {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return (path: string) =>
    new Promise<string>((resolve, reject) => {
      const req = http.get(
        { agent, host: base.hostname, port: base.port, path, headers: { accept: "text/html" } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            if (res.statusCode !== 200)
              reject(new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 200)}`));
            else resolve(text);
          });
        },
      );
      req.on("error", reject);
    });
}

/** A page's budget as a ratio of the API's tree page: 1 is the floor plus one query, 2 issue 20's bound. */
const target = (max: number, ratio: number) => ({
  target: max === 1 ? "≤ 1 (floor + one query)" : `≤ ${max} (issue 20)`,
  met: ratio <= max,
});

export async function measureWeb(server: QuireProcess): Promise<string> {
  const q = quireClient(server.url);
  const page = pageGetter(server.url);
  await createOrg(q);
  const repo = await createRepo(q, "web");
  progress(`web: writing ${FILES} files`);
  await writeTree(q, repo, FILES);

  const floor = await measureHttpFloor(q, BUDGET);
  progress("web: API tree page");
  const api = await runLoad({
    label: "api tree",
    concurrency: 1,
    warmup: 20,
    ...BUDGET,
    send: async () => {
      const body = await q.get("/repos/:repo*/-/tree", { params: { repo }, query: { limit: String(PAGE) } });
      if (body.entries.length !== PAGE) throw new Error(`expected ${PAGE} entries`);
    },
  });
  // The folder of 100 files is the API page's equal (100 entries); the folder of folders reads
  // each folder's last commit besides (docs/web.md, "Finding one's way"): issue 20 allows 2x.
  const folderOfFiles = fixturePath(0).split("/").slice(0, -1).join("/");
  const pages: [string, string, number][] = [
    ["web folder page (100 files)", `/ui/repos/${repo}/-/tree/${folderOfFiles}?limit=${PAGE}`, 2],
    ["web file page (Markdown, with history)", `/ui/repos/${repo}/-/file/${fixturePath(0)}`, 1],
    [`web folder page (${FILES / 100} folders)`, `/ui/repos/${repo}/-/tree/docs?limit=${PAGE}`, 2],
  ];
  const results: [string, LoadResult][] = [
    ["GET /healthz (HTTP floor)", floor],
    ["API tree page (floor + one query)", api],
  ];
  for (const [label, path] of pages) {
    progress(`web: ${label}`);
    const result = await runLoad({
      label,
      concurrency: 1,
      warmup: 20,
      ...BUDGET,
      send: async () => {
        const html = await page(path);
        if (!html.includes("</html>")) throw new Error(`${path}: not a whole page`);
      },
    });
    results.push([label, result]);
  }
  const budget = api.p50Ms;
  const rows: Row[] = results.map(([label, r], n) => ({
    scenario: label,
    result: `n=${r.requests}`,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    ratio: r.p50Ms / budget,
    ratioOf: "API tree page p50",
    ...(n >= 2 ? target(pages[n - 2]?.[2] ?? 1, r.p50Ms / budget) : {}),
    errors: r.errors,
  }));
  return markdownTable(rows);
}
