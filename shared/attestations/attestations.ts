import type { RepoAccess } from "../access/roles.ts";
import type { JobActor } from "../auth/actor.ts";
import type { BranchRow } from "../branches/branches.ts";
import { requireBranch } from "../branches/branches.ts";
import { firstRowOf, prepared, type Queryable } from "../db/pool.ts";
import type { Tx } from "../db/tx.ts";
import { upToAt } from "../reviews/at.ts";
import type { LogSigner } from "../transparency/signer.ts";
import { type DsseEnvelope, IN_TOTO_PAYLOAD_TYPE, signEnvelope } from "./dsse.ts";
import { checkStatementOf } from "./statement.ts";

const commit_hash_select = prepared<{ hash: string }>(
  "commit_hash_select",
  "SELECT hash FROM commits WHERE repo_id = $1 AND sequence = $2",
);

// The whole log the job stored for the check, if any: its digest goes into the statement.
const log_digest_select = prepared<{ sha256: string }>(
  "log_digest_select",
  "SELECT encode(sha256, 'hex') AS sha256 FROM ci_logs WHERE job_id = $1 AND check_name = $2 AND final AND sha256 IS NOT NULL",
);

// One per (branch, sequence, check): a later job's verdict there replaces the earlier envelope.
const attestation_upsert = `
  INSERT INTO check_attestations (repo_id, branch_id, sequence, check_name, job_id, envelope, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp())
  ON CONFLICT (branch_id, sequence, check_name) DO UPDATE
    SET job_id = EXCLUDED.job_id, envelope = EXCLUDED.envelope, created_at = EXCLUDED.created_at`;

const attestations_select = `
  SELECT envelope FROM check_attestations
  WHERE branch_id = $1 AND sequence <= $2
  ORDER BY sequence, check_name`;

export interface AttestedReport {
  access: RepoAccess;
  branch: BranchRow;
  sequence: number;
  checkName: string;
  status: "passed" | "failed" | "pending";
  logUrl: string | null;
  job: JobActor;
  /** The hex SHA-256 of the image manifest the job's steps ran in, as the worker reported it. */
  imageDigest: string | null;
}

/**
 * Signs and keeps the attestation of a CI job's check verdict, inside the check run's transaction
 * (no attested verdict without its check run, and the other way round for a job's final verdict).
 * `pending` is not a test result, so it is not attested; only job tokens reach here (a person's
 * report is a bare check status). The subject's digest is the hash of the commit at the sequence,
 * the leaf the transparency log holds for it, so a verifier can prove it against a checkpoint.
 */
export async function recordAttestation(tx: Tx, signer: LogSigner, r: AttestedReport): Promise<void> {
  if (r.status === "pending") return;
  const commit = await firstRowOf(tx, commit_hash_select([r.access.repo.id, r.sequence]));
  // A purged sequence keeps its leaf but not its commit row: there is no hash to attest to.
  if (!commit) return;
  const log = await firstRowOf(tx, log_digest_select([r.job.id, r.checkName]));
  const statement = checkStatementOf({
    repo: r.access.repo.name,
    branch: r.branch.name,
    sequence: r.sequence,
    commitHash: commit.hash,
    checkName: r.checkName,
    status: r.status,
    logUrl: r.logUrl,
    job: { id: r.job.id, attempt: r.job.attempt },
    imageDigest: r.imageDigest,
    logDigest: log?.sha256 ?? null,
  });
  const envelope = await signEnvelope(signer, IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement)));
  await tx.query(attestation_upsert, [
    r.access.repo.id,
    r.branch.id,
    r.sequence,
    r.checkName,
    r.job.id,
    JSON.stringify(envelope),
  ]);
}

/** The attestations of a branch at sequences at or before `at` (default: its head), by sequence then check name. */
export async function listAttestations(
  db: Queryable,
  access: RepoAccess,
  q: { branch: string; at?: number | undefined },
): Promise<DsseEnvelope[]> {
  const branch = await requireBranch(db, access.repo.id, q.branch);
  const { rows } = await db.query<{ envelope: DsseEnvelope }>(attestations_select, [
    branch.id,
    upToAt(branch, q.at),
  ]);
  return rows.map((r) => r.envelope);
}
