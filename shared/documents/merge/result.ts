/**
 * What a three-way merge of one document answers (docs/merge.md): the merged text, or every place
 * where both sides changed the same thing differently. `ours` is `main`, `theirs` the branch.
 */
export type DocumentMerge = { content: string } | { conflicts: DocumentConflict[] };

/**
 * One place both sides changed differently. In JSON and YAML `path` names it as
 * `shared/documents/path.ts` does (`limits.max_files`, `owners[2]`) and the values are the data
 * there, a side without the key having no field; in text `path` is "" and `line` is the 1-based
 * line of the base where the region starts, the values being its lines on each side.
 */
export interface DocumentConflict {
  path: string;
  line?: number;
  /** In a multi-document YAML file, the 0-based document. */
  document?: number;
  base?: unknown;
  ours?: unknown;
  theirs?: unknown;
}
