import type { RepoRow } from "../access/roles.ts";
import type { BranchRow } from "../branches/branches.ts";
import type { Queryable } from "../db/pool.ts";
import { type DsseEnvelope, openEnvelope } from "./dsse.ts";
import { checkStatement } from "./statement.ts";

/** A check verdict whose attestation the server verified: what a merge policy reads (docs/policies.md). */
export interface VerifiedAttestation {
  check_name: string;
  result: "passed" | "failed";
  /** The CI job that reported it. */
  job: string;
  sequence: number;
}

const attestations_at_head = `
  SELECT a.check_name, a.envelope, c.hash
  FROM check_attestations a JOIN commits c ON c.repo_id = a.repo_id AND c.sequence = a.sequence
  WHERE a.branch_id = $1 AND a.sequence = $2
  ORDER BY a.check_name`;

/**
 * The verdict an envelope attests for `check_name` at `sequence`, or null when it does not hold:
 * not signed by `publicKey`, or a statement about another commit, sequence or check. A row is
 * never taken on trust: whoever could write the table (a forged row, a restored backup) cannot
 * make a policy see a verdict the service's key did not sign for this very commit.
 */
function verdictOf(
  row: { check_name: string; envelope: DsseEnvelope; hash: string },
  repo: string,
  sequence: number,
  publicKey: Buffer,
): VerifiedAttestation | null {
  const payload = openEnvelope(row.envelope, publicKey);
  if (!payload) return null;
  const parsed = checkStatement.safeParse(JSON.parse(payload.toString("utf8")));
  if (!parsed.success) return null;
  const { subject, predicate } = parsed.data;
  const about = subject[0];
  if (about.digest.sha256 !== row.hash || about.name !== `${repo}@${sequence}`) return null;
  if (predicate.check_name !== row.check_name || predicate.sequence !== sequence) return null;
  return {
    check_name: predicate.check_name,
    result: predicate.result === "PASSED" ? "passed" : "failed",
    job: predicate.job.id,
    sequence,
  };
}

/** The attestations at the branch's head that verify against the log's key, by check name. */
export async function verifiedAttestations(
  db: Queryable,
  publicKey: Buffer,
  repo: RepoRow,
  branch: BranchRow,
): Promise<VerifiedAttestation[]> {
  const sequence = branch.head_sequence;
  const { rows } = await db.query<{ check_name: string; envelope: DsseEnvelope; hash: string }>(
    attestations_at_head,
    [branch.id, sequence],
  );
  return rows.flatMap((r) => verdictOf(r, repo.name, sequence, publicKey) ?? []);
}
