import type { BlobStore } from "../blobs/store.ts";
import type { Queryable } from "../db/pool.ts";
import {
  type DocumentDiff,
  documentFormat,
  MAX_DOCUMENT_CHARS,
  structureBudget,
} from "../documents/changes.ts";
import type { NetChange } from "./changes.ts";
import { loadBodyUpTo } from "./content.ts";

/**
 * Most JSON and YAML files whose changed places the policy input carries, and most characters of
 * their texts in all. Each costs a read of both sides inside the merge transaction and a parse
 * (YAML: about 380 ms of CPU for 250 KB), so a merge of many documents holds its locks no more
 * than about that; a policy sees a file past the caps as it sees any file without `structure`
 * (docs/policies.md).
 */
export const MAX_STRUCTURED_FILES = 50;
const MAX_STRUCTURED_CHARS = 262_144;

/** A UTF-8 character is at most 4 bytes: a text past this many bytes is too long to diff by structure. */
const MAX_DOCUMENT_BYTES = 4 * MAX_DOCUMENT_CHARS;

/** A side's text: null when it does not exist, undefined when it is binary or too large. */
async function sideText(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  sha: Buffer | null,
  binary: boolean,
): Promise<string | null | undefined> {
  if (sha === null) return null;
  if (binary) return undefined;
  const data = await loadBodyUpTo(db, blobs, repoId, sha, MAX_DOCUMENT_BYTES);
  return data === null ? undefined : data.toString("utf8");
}

/**
 * The changed places of the first MAX_STRUCTURED_FILES JSON and YAML files among a branch's
 * changes, by file path (shared/documents/changes.ts); files that do not parse are left out.
 * Reads one after another on `db`, which may be the caller's transaction client.
 */
export async function structureOfChanges(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  changes: NetChange[],
): Promise<Record<string, DocumentDiff>> {
  const out: Record<string, DocumentDiff> = {};
  const structureOf = structureBudget(MAX_STRUCTURED_CHARS);
  const documents = changes.filter((c) => documentFormat(c.path) !== null).slice(0, MAX_STRUCTURED_FILES);
  for (const c of documents) {
    const before = await sideText(db, blobs, repoId, c.mainSha, c.mainBinary);
    const after = await sideText(db, blobs, repoId, c.branchSha, c.branchBinary);
    if (before === undefined || after === undefined) continue;
    const structure = structureOf(c.path, before, after);
    if (structure) out[c.path] = structure;
  }
  return out;
}
