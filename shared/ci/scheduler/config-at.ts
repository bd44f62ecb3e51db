import type { BlobStore } from "../../blobs/store.ts";
import type { BranchRow } from "../../branches/branches.ts";
import { loadBody } from "../../commits/content.ts";
import { fileInView, viewOf } from "../../commits/view.ts";
import type { Queryable } from "../../db/pool.ts";
import { CI_CONFIG_PATH, type ConfigError, MAX_CONFIG_BYTES } from "../config/file.ts";
import type { CiConfig } from "../config/schema.ts";

/** What `.svc/ci.yaml` says on the branch under test at one sequence. */
export type ConfigAt =
  | { kind: "absent" }
  | { kind: "invalid"; errors: ConfigError[] }
  | { kind: "valid"; config: CiConfig };

// Parsed configurations by content hash: a file's bytes decide its meaning, so the cron runner,
// which reads every repo's file each minute, parses each version once. Bounded: oldest out first.
const parsed = new Map<string, ConfigAt>();
const PARSED_MAX = 1000;

/**
 * Reads and parses the CI configuration of `branch` at `sequence` (SPEC: "The file is read from
 * the branch under test, at the pinned sequence").
 */
export async function configAt(
  db: Queryable,
  blobs: BlobStore,
  repoId: number,
  branch: BranchRow,
  sequence: number,
): Promise<ConfigAt> {
  const view = await viewOf(db, repoId, branch, sequence);
  const version = await fileInView(db, view, CI_CONFIG_PATH);
  if (!version) return { kind: "absent" };
  const key = version.content_sha256.toString("hex");
  const known = parsed.get(key);
  if (known) return known;
  const body = await loadBody(db, blobs, repoId, version.content_sha256);
  const result = await parseBody(body);
  const oldest = parsed.keys().next();
  if (parsed.size >= PARSED_MAX && !oldest.done) parsed.delete(oldest.value);
  parsed.set(key, result);
  return result;
}

/** Imports the parser at the first file it reads (shared/ci/config/file.ts says why). */
async function parseBody(body: Buffer): Promise<ConfigAt> {
  if (body.length > MAX_CONFIG_BYTES)
    return {
      kind: "invalid",
      errors: [
        {
          message: `the file is ${body.length} bytes; the most a configuration may have is ${MAX_CONFIG_BYTES}`,
        },
      ],
    };
  const { parseCiConfig } = await import("../config/parse.ts");
  const result = parseCiConfig(body.toString("utf8"));
  return result.ok ? { kind: "valid", config: result.config } : { kind: "invalid", errors: result.errors };
}
