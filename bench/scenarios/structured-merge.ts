import { stringify } from "yaml";
import { type MergedAs, mergeDocument } from "../../shared/documents/merge/index.ts";
import { quireClient } from "../client.ts";
import { commit, createOrg, createRepo, writeTree } from "../fixtures.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";
import type { Row } from "../report.ts";
import type { QuireProcess } from "../server.ts";
import { createMergeBranches, measureMerges } from "./merge.ts";

/*
 * Structured merges (issue 23, docs/merge.md), run alone with
 * `npm run bench -- --only structured-merge`:
 * - a 1 MB JSON and a 1 MB YAML document changed on both sides, merged in this process, p50 of
 *   RUNS merges, against JSON.parse of the same bytes in the same run (the YAML whose lines
 *   conflict is past the structured bound: only the slice around the conflict is parsed), and a
 *   YAML document just under the bound merged whole by structure, its worst case;
 * - 500-file merges through the API with no file changed on both sides, on a repo whose
 *   `.svc/merge.yaml` says `default: file` (today's whole-file rule) against one without it.
 */

const RUNS = 15;
/** Elements that make about a megabyte: YAML spends fewer bytes on each than indented JSON. */
const JSON_ELEMENTS = 3_500;
const YAML_ELEMENTS = 4_900;
/** Elements that make a YAML document just under MAX_STRUCTURED_YAML_BYTES (64 KiB). */
const BOUND_YAML_ELEMENTS = 300;
const MERGES = 5;
const FILES = 500;

/** A document of about a megabyte: a list of elements with an `id` each, and some settings. */
function bigDocument(elements: number) {
  return {
    settings: { max_files: 100, owners: ["ann", "bob"] },
    items: Array.from({ length: elements }, (_, i) => ({
      id: `item-${i}`,
      title: `Element number ${i} of the benchmark document`,
      weight: i * 3,
      tags: ["alpha", "beta", "gamma"],
      limits: { read: i % 7, write: i % 11, enabled: i % 2 === 0 },
    })),
  };
}

type Big = ReturnType<typeof bigDocument>;

/** Two sides' edits: the same element's neighbouring fields (a line conflict), or far apart. */
function sides(near: boolean, elements: number): [Big, Big, Big] {
  const base = bigDocument(elements);
  const ours = structuredClone(base);
  const theirs = structuredClone(base);
  ours.settings.max_files = 200;
  const oursItem = ours.items[100];
  const theirsItem = theirs.items[near ? 100 : 3_000];
  if (!oursItem || !theirsItem) throw new Error("the document is too short");
  oursItem.title = "renamed by main";
  theirsItem.weight = -1;
  // A copy: the same `tags` array twice would be written as an anchor and an alias in YAML.
  theirs.items.push({ ...structuredClone(theirsItem), id: "item-new" });
  return [base, ours, theirs];
}

/** p50 in ms of `runs` runs of `work`, after one untimed run. */
function p50(work: () => void, runs = RUNS): number {
  work();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

/** One case, which must merge (no conflict) the way `mergedAs` says: by structure, or by lines. */
function mergeCase(
  label: string,
  file: string,
  texts: string[],
  baselineMs: number,
  mergedAs: MergedAs,
  targetMs?: number,
): Row {
  // A case without a target takes a good part of a second per merge: five runs say enough.
  const runs = targetMs === undefined ? 5 : RUNS;
  const [base = "", ours = "", theirs = ""] = texts;
  const ms = p50(() => {
    const m = mergeDocument(file, base, ours, theirs);
    if (!("content" in m) || m.merged_as !== mergedAs)
      throw new Error(`${label}: expected a merge as ${mergedAs}, got ${JSON.stringify(m).slice(0, 500)}`);
  }, runs);
  const row: Row = {
    scenario: label,
    result: `${(base.length / 1e6).toFixed(2)} MB, merged as ${mergedAs} (n=${runs})`,
    p50Ms: ms,
    ratio: ms / baselineMs,
    ratioOf: "JSON.parse of the 1 MB JSON",
    errors: 0,
  };
  if (targetMs !== undefined) Object.assign(row, { target: `< ${targetMs} ms p50`, met: ms < targetMs });
  return row;
}

function documentRows(): Row[] {
  progress("structured-merge: 1 MB documents changed on both sides");
  const json = sides(true, JSON_ELEMENTS).map((d) => `${JSON.stringify(d, null, 2)}\n`);
  const baseline = p50(() => JSON.parse(json[0] ?? ""));
  const yamlFar = sides(false, YAML_ELEMENTS).map((d) => stringify(d));
  const yamlNear = sides(true, YAML_ELEMENTS).map((d) => stringify(d));
  const yamlAtBound = sides(true, BOUND_YAML_ELEMENTS).map((d) => stringify(d));
  return [
    mergeCase(
      "1 MB JSON, both sides edit one element (a line conflict)",
      "big.json",
      json,
      baseline,
      "json",
      50,
    ),
    // A clean line merge: past MAX_STRUCTURED_YAML_BYTES, taken as it is.
    mergeCase("1 MB YAML, edits far apart", "big.yaml", yamlFar, baseline, "text", 50),
    // Past MAX_STRUCTURED_YAML_BYTES: the conflicting lines are merged by structure, narrowed to
    // the element's keys around them (docs/merge.md, "Large files").
    mergeCase(
      "1 MB YAML, both sides edit one element (a line conflict, merged by structure)",
      "big.yaml",
      yamlNear,
      baseline,
      "yaml",
      50,
    ),
    // No target: the most a YAML file merged whole by structure costs (docs/merge.md, "Large files").
    mergeCase(
      "60 KB YAML, both sides edit one element (merged by structure)",
      "big.yaml",
      yamlAtBound,
      baseline,
      "yaml",
    ),
  ];
}

/** p50 of 500-file merges on a fresh repo; `config` is its `.svc/merge.yaml`, if any. */
async function fileMerges(server: QuireProcess, name: string, config: string | null) {
  const q = quireClient(server.url);
  const repo = await createRepo(q, name);
  await writeTree(q, repo, FILES * MERGES);
  if (config !== null)
    await commit(q, repo, "main", "merge rules", [{ path: ".svc/merge.yaml", text: config }]);
  const plan = { branches: MERGES, files: FILES, fileBytes: 512, maxSeconds: 600 };
  const branches = await createMergeBranches(q, repo, FILES * MERGES, plan);
  return measureMerges(q, repo, branches, plan.maxSeconds);
}

/** The scenario's rows (`--only structured-merge`). */
export async function measureStructuredMerge(server: QuireProcess): Promise<Row[]> {
  const rows = documentRows();
  await createOrg(quireClient(server.url));
  const today = await fileMerges(server, "merge-file-rule", "default: file\n");
  const structured = await fileMerges(server, "merge-structured", null);
  rows.push({
    scenario: `${FILES}-file merge, no file changed on both sides`,
    result: `${structured.requests} merges (n=${MERGES} each)`,
    p50Ms: structured.p50Ms,
    p99Ms: structured.p99Ms,
    ratio: structured.p50Ms / today.p50Ms,
    ratioOf: "the same merges under `default: file`",
    target: "within 10%",
    met: structured.p50Ms <= today.p50Ms * 1.1,
    errors: structured.errors + today.errors,
  });
  return rows;
}
