import { recomputedHash } from "../workcopy/history.ts";
import type { Remote } from "../workcopy/remote.ts";
import { type Audit, auditRepo, type LogGet, proveIncluded } from "./audit.ts";
import type { CheckpointStore } from "./store.ts";

/** One commit `quire verify` proved: recomputed from its inputs, then found in the signed log. */
export interface ProvedCommit {
  sequence: number;
  /** The branch whose head it is, or null for a sequence asked for with --sequence. */
  head_of: string | null;
  hash: string;
  proof_hashes: number;
}

export interface LogVerification {
  audit: Audit;
  commits: ProvedCommit[];
}

/**
 * `quire verify`: the checkpoint (signature, and consistency with the one remembered), then, for
 * the head of main and of every active branch and each sequence asked for, the commit recomputed
 * from its inputs and its inclusion proof against the checkpoint. O(log n) hashes per commit, never
 * the whole chain. With `witnesses`, the checkpoint must carry a valid cosignature by each. Throws a CliError naming what does not hold.
 */
export async function verifyLog(
  remote: Remote,
  get: LogGet,
  store: CheckpointStore,
  repo: string,
  sequences: number[],
  witnesses: string[] = [],
): Promise<LogVerification | null> {
  const audit = await auditRepo(get, store, remote.server, repo, new Date(), witnesses);
  if (!audit) return null;
  const heads = [await remote.branch(repo, "main"), ...(await remote.branches(repo, { status: "active" }))];
  const wanted = new Map<number, string | null>(sequences.map((s) => [s, null]));
  for (const b of heads) if (b.head_sequence > 0) wanted.set(b.head_sequence, b.name);
  const commits: ProvedCommit[] = [];
  for (const [sequence, headOf] of [...wanted].sort((a, b) => a[0] - b[0])) {
    if (sequence > audit.checkpoint.size) continue; // committed after the checkpoint was read
    const [c] = await remote.chain(repo, sequence, sequence);
    if (!c) throw new Error(`the chain shows no commit ${sequence}`);
    const recomputed = recomputedHash(c);
    // The recomputed hash is what is proved: a commit whose shown contents differ from what was
    // logged fails here whatever hash the server sends beside it.
    const proof_hashes = await proveIncluded(get, repo, audit.checkpoint, sequence, recomputed);
    commits.push({ sequence, head_of: headOf, hash: recomputed, proof_hashes });
  }
  return { audit, commits };
}
