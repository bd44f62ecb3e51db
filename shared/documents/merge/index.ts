import path from "node:path";
import { mergeJson } from "./json.ts";
import type { DocumentConflict, DocumentMerge } from "./result.ts";
import { mergeText } from "./text.ts";
import type { ValueMergeOptions } from "./values.ts";
import { mergeYaml } from "./yaml.ts";
import { mergeYamlFile } from "./yaml-narrow.ts";

export type { DocumentConflict, DocumentMerge } from "./result.ts";

/**
 * How a file both sides changed is merged (`.svc/merge.yaml`, docs/merge.md): `structured` by its
 * kind (JSON, YAML, Markdown front matter, else text), `text` by lines, `file` not at all (any
 * change on both sides is a conflict, Quire's behaviour before structured merges).
 */
export type MergeMode = "structured" | "text" | "file";

export interface MergeRule extends ValueMergeOptions {
  merge: MergeMode;
}

/** Which merge produced the answer; `text` also when a structured file did not parse on a side. */
export type MergedAs = "json" | "yaml" | "markdown" | "text" | "file";

export type DocumentMergeAs = DocumentMerge & { merged_as: MergedAs };

const JSON_EXTENSIONS = new Set([".json", ".jsonc", ".webmanifest", ".har"]);
const YAML_EXTENSIONS = new Set([".yaml", ".yml"]);
const MARKDOWN_EXTENSIONS = new Set([".md", ".markdown", ".mdx"]);

type Kind = "json" | "yaml" | "markdown" | "text";

/** The kind of a file by its name: its extension, case aside. */
export function kindOf(filePath: string): Kind {
  const ext = path.posix.extname(filePath).toLowerCase();
  if (JSON_EXTENSIONS.has(ext)) return "json";
  if (YAML_EXTENSIONS.has(ext)) return "yaml";
  if (MARKDOWN_EXTENSIONS.has(ext)) return "markdown";
  return "text";
}

/**
 * Merges `ours` (`main`) and `theirs` (the branch), both edits of `base`, by the rule for the
 * file: structured by its kind, falling back to the line merge when a side does not parse.
 */
export function mergeDocument(
  filePath: string,
  base: string,
  ours: string,
  theirs: string,
  rule: MergeRule = { merge: "structured" },
): DocumentMergeAs {
  if (ours === theirs || base === theirs) return { content: ours, merged_as: "text" };
  if (base === ours) return { content: theirs, merged_as: "text" };
  if (rule.merge === "file") return { conflicts: [], merged_as: "file" };
  const kind = rule.merge === "text" ? "text" : kindOf(filePath);
  const structured = structuredMerge(kind, base, ours, theirs, rule);
  if (structured) return { merged_as: kind, ...structured };
  return { ...mergeText(base, ours, theirs), merged_as: "text" };
}

/**
 * The merge by structure, or null to merge by lines: also when reading a side throws (a YAML
 * file whose aliases expand past the limit, say), so no document can make a merge answer 500.
 * A YAML file past the structured bound says itself how it merged (yaml-narrow.ts).
 */
function structuredMerge(
  kind: Kind,
  base: string,
  ours: string,
  theirs: string,
  options: ValueMergeOptions,
): (DocumentMerge & { merged_as?: MergedAs }) | null {
  try {
    if (kind === "json") return mergeJson(base, ours, theirs, options);
    if (kind === "yaml") return mergeYamlFile(base, ours, theirs, options);
    if (kind === "markdown") return mergeMarkdown(base, ours, theirs, options);
    return null;
  } catch {
    return null;
  }
}

/** Front matter: a YAML block between `---` lines at the very start of the file. */
const FRONT_MATTER = /^---\r?\n(?:[\s\S]*?\r?\n)?---\r?\n/;

/**
 * Markdown whose three versions all open with front matter: the front matter merges as YAML,
 * the rest by lines; null when one has none (the caller merges the whole file by lines).
 */
function mergeMarkdown(
  base: string,
  ours: string,
  theirs: string,
  options: ValueMergeOptions,
): DocumentMerge | null {
  const heads = [base, ours, theirs].map((text) => FRONT_MATTER.exec(text)?.[0]);
  const [bh, oh, th] = heads;
  if (bh === undefined || oh === undefined || th === undefined) return null;
  const inner = (head: string) => head.replace(/^---\r?\n/, "").replace(/---\r?\n$/, "");
  const front =
    mergeYaml(inner(bh), inner(oh), inner(th), options) ?? mergeText(inner(bh), inner(oh), inner(th));
  const body = mergeText(base.slice(bh.length), ours.slice(oh.length), theirs.slice(th.length));
  const conflicts: DocumentConflict[] = [];
  if ("conflicts" in front)
    conflicts.push(...front.conflicts.map((c) => (c.line ? { ...c, line: c.line + 1 } : c)));
  const headLines = bh.split("\n").length - 1;
  if ("conflicts" in body)
    conflicts.push(...body.conflicts.map((c) => ({ ...c, line: (c.line ?? 1) + headLines })));
  if ("content" in front && "content" in body)
    return { content: `---\n${front.content}---\n${body.content}` };
  return { conflicts };
}
