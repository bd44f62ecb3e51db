import picomatch from "picomatch";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { z } from "zod";
import { formatPath } from "../path.ts";
import type { MergeRule } from "./index.ts";

/** Where a repo says how files both sides changed are merged; read on `main` at the branch's base. */
export const MERGE_CONFIG_PATH = ".svc/merge.yaml";

/** Largest file parsed: a configuration is a few dozen lines. */
export const MAX_MERGE_CONFIG_BYTES = 64 * 1024;

const glob = z
  .string()
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .refine((p) => !p.startsWith("!"), "must not start with '!': list the paths a rule is for");

const ruleSchema = z.strictObject({
  path: glob,
  merge: z.enum(["structured", "text", "file"]),
  identity: z.string().min(1).max(100).optional(),
});

const configSchema = z.strictObject({
  default: z.enum(["structured", "file"]).default("structured"),
  identity: z.string().min(1).max(100).optional(),
  rules: z.array(ruleSchema).max(200).default([]),
});

type ConfigFile = z.output<typeof configSchema>;

/** One problem in the file; `line` and `column` are 1-based and point at the offending node. */
export interface MergeConfigError {
  message: string;
  line?: number;
  column?: number;
}

/** The repo's merge configuration: which rule applies to a path. */
export interface MergeConfig {
  ruleFor(path: string): MergeRule;
}

/** No `.svc/merge.yaml`: every file merges by its structure. */
export const DEFAULT_MERGE_CONFIG: MergeConfig = { ruleFor: () => ({ merge: "structured" }) };

// Git-like globs, as CI's branch globs (shared/ci/config/glob.ts): no braces, extglobs or negation.
const GLOB_OPTIONS: picomatch.PicomatchOptions = {
  posix: true,
  nobrace: true,
  noextglob: true,
  nonegate: true,
  dot: true,
};

/**
 * A pattern without a `/` matches a file's name in any folder, as in `.gitattributes`; one with a
 * `/` matches the whole path from the root.
 */
function matcherOf(pattern: string): (path: string) => boolean {
  const match = picomatch(pattern, GLOB_OPTIONS);
  if (pattern.includes("/")) return match;
  return (path) => match(path.slice(path.lastIndexOf("/") + 1));
}

function configOf(file: ConfigFile): MergeConfig {
  const rules = file.rules.map((r) => ({ ...r, matches: matcherOf(r.path) }));
  return {
    ruleFor(path) {
      // The last rule that matches wins, as in .gitattributes.
      const rule = rules.findLast((r) => r.matches(path));
      const identity = rule?.identity ?? file.identity;
      const merge = rule?.merge ?? file.default;
      return identity === undefined ? { merge } : { merge, identity };
    },
  };
}

export type ParseMergeConfigResult =
  | { ok: true; config: MergeConfig }
  | { ok: false; errors: MergeConfigError[] };

/** Parses and validates `.svc/merge.yaml`, every problem at once with its line and column. */
export function parseMergeConfig(text: string): ParseMergeConfigResult {
  if (Buffer.byteLength(text, "utf8") > MAX_MERGE_CONFIG_BYTES)
    return { ok: false, errors: [{ message: `the file is larger than ${MAX_MERGE_CONFIG_BYTES} bytes` }] };
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const position = (offset: number | undefined) => {
    if (offset === undefined) return {};
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
  const syntax = [...doc.errors, ...doc.warnings];
  if (syntax.length > 0)
    return {
      ok: false,
      errors: syntax.map((e) => ({ message: `YAML: ${e.message}`, ...position(e.pos[0]) })),
    };
  const parsed = configSchema.safeParse(doc.toJS() ?? {});
  if (parsed.success) return { ok: true, config: configOf(parsed.data) };
  const errors = parsed.error.issues.flatMap((issue) => {
    const keys = issue.code === "unrecognized_keys" ? issue.keys : [undefined];
    return keys.map((key) => {
      const path = key === undefined ? issue.path : [...issue.path, key];
      const where = formatPath(issue.path.map((s) => (typeof s === "number" ? s : String(s))));
      const message = key === undefined ? issue.message : `unknown key '${key}'`;
      return {
        message: `${where || "the file"}: ${message}`,
        ...position(nodeAt(doc.contents as Node | null, path, key !== undefined)),
      };
    });
  });
  return { ok: false, errors };
}

/** The offset of the deepest node on `path` (of the key itself for an unknown key). */
function nodeAt(root: Node | null, path: readonly PropertyKey[], isKey: boolean): number | undefined {
  let node: Node | null | undefined = root;
  let offset = root?.range?.[0];
  for (const [i, seg] of path.entries()) {
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (pair && isKey && i === path.length - 1) return (pair.key as Node).range?.[0];
      next = pair?.value;
    } else if (isSeq(node) && typeof seg === "number") next = node.items[seg];
    if (!next || !(next as Node).range) return offset;
    node = next as Node;
    offset = node.range?.[0];
  }
  return offset;
}
