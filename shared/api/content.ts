import { z } from "zod";
import { sequence, timestamp } from "./wire.ts";

/** The reads of a repo's content: commits, tree, files, history, diff and hash chain. */

export const commitResponse = z.object({
  sequence,
  branch: z.string(),
  message: z.string(),
  author: z.string(),
  created_at: timestamp,
  /** Each file the commit changed; a null version: deleted. */
  files: z.array(z.object({ path: z.string(), version_id: z.string().nullable() })),
});
export type CommitResponse = z.output<typeof commitResponse>;

export const treeEntry = z.object({
  path: z.string(),
  version_id: z.string(),
  content_type: z.string(),
  binary: z.boolean(),
});
export const treeResponse = z.object({ entries: z.array(treeEntry) });
export type TreeResponse = z.output<typeof treeResponse>;

export const fileResponse = z.object({
  path: z.string(),
  /** base64 */
  content: z.string(),
  content_type: z.string(),
  version_id: z.string(),
});
export type FileResponse = z.output<typeof fileResponse>;

export const fileHistoryResponse = z.object({
  entries: z.array(
    z.object({
      sequence,
      branch: z.string(),
      version_id: z.string().nullable(),
      deleted: z.boolean(),
      author: z.string(),
      message: z.string(),
      created_at: timestamp,
    }),
  ),
});
export type FileHistoryResponse = z.output<typeof fileHistoryResponse>;

/** A place inside a file both sides changed differently (docs/merge.md); a side without it has no field. */
export const conflictPlace = z.object({
  path: z.string(),
  line: z.number().int().optional(),
  document: z.number().int().optional(),
  base: z.unknown().optional(),
  ours: z.unknown().optional(),
  theirs: z.unknown().optional(),
});
export const conflict = z.object({
  path: z.string(),
  main_version_id: z.string().nullable(),
  branch_version_id: z.string().nullable(),
  /** How the merge of the file was tried: by structure, by lines, or not (`file`). Merge, rebase, branch status and diff. */
  merge: z.enum(["json", "yaml", "markdown", "text", "file"]).optional(),
  /** Each place inside the file both sides changed differently. Merge, rebase, branch status and diff. */
  paths: z.array(conflictPlace).optional(),
});
/**
 * The changed places of a JSON or YAML file (shared/documents/changes.ts, docs/api.md "Structured
 * changes"): `old` and `new` are the values there, left out (with `values_omitted`) when long.
 */
export const documentDiff = z.object({
  format: z.enum(["json", "yaml"]),
  multi_document: z.boolean(),
  paths: z.array(
    z.object({
      path: z.string(),
      op: z.enum(["added", "removed", "changed"]),
      old: z.unknown().optional(),
      new: z.unknown().optional(),
      values_omitted: z.literal(true).optional(),
    }),
  ),
  truncated: z.boolean(),
});

export const diffResponse = z.object({
  changes: z.array(
    z.object({
      path: z.string(),
      status: z.enum(["added", "modified", "deleted"]),
      binary: z.boolean(),
      diff: z.string(),
      /** Only for a JSON or YAML file whose existing sides parse. */
      structure: documentDiff.optional(),
    }),
  ),
  conflicts: z.array(conflict),
});
export type DiffResponse = z.output<typeof diffResponse>;

export const chainResponse = z.object({
  commits: z.array(
    z.object({
      sequence,
      repo: z.string(),
      branch: z.string(),
      author: z.string(),
      message: z.string(),
      created_at: timestamp,
      /** content_sha256 in hex; "" for a deletion. */
      files: z.array(z.object({ path: z.string(), content_sha256: z.string() })),
      prev_hash: z.string().nullable(),
      hash: z.string(),
    }),
  ),
});
export type ChainResponse = z.output<typeof chainResponse>;
