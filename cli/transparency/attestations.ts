import type { DsseEnvelope } from "../../shared/attestations/dsse.ts";
import { openEnvelope } from "../../shared/attestations/dsse.ts";
import { checkStatement } from "../../shared/attestations/statement.ts";
import { parseVerifierKey } from "../../shared/transparency/note.ts";
import { CliError } from "../errors.ts";
import { type Audit, type LogGet, proveIncluded } from "./audit.ts";

/** One attestation `quire verify --attestations` checked. */
export interface VerifiedCheck {
  branch: string;
  sequence: number;
  check_name: string;
  result: "PASSED" | "FAILED";
  job: string;
  proof_hashes: number;
}

const attestationsPath = (repo: string, branch: string) =>
  `/repos/${repo.split("/").map(encodeURIComponent).join("/")}/-/attestations?branch=${encodeURIComponent(branch)}`;

function refused(repo: string, branch: string, i: number, why: string): never {
  throw new CliError(`attestation ${i} of ${repo} on '${branch}' is refused: ${why}`, {
    hint: "the server shows a check verdict the service's key did not sign for that commit; report it",
  });
}

/**
 * Checks every attestation of `branches`: its DSSE signature by the log key pinned for the server
 * (the one the checkpoint was verified with), that it is an in-toto test-result statement about
 * `<repo>@<sequence>`, and that its subject's digest is the leaf at that sequence of the signed
 * log, by an inclusion proof against the audited checkpoint. Throws a CliError at the first that
 * does not hold; skips those about sequences logged after the checkpoint was read.
 */
export async function verifyAttestations(
  get: LogGet,
  pinnedKey: string,
  audit: Audit,
  branches: string[],
): Promise<VerifiedCheck[]> {
  const { publicKey } = parseVerifierKey(pinnedKey);
  const checked: VerifiedCheck[] = [];
  for (const branch of branches) {
    const res = await get(attestationsPath(audit.repo, branch));
    if (res.status !== 200) throw new CliError(`GET attestations of '${branch}': ${res.status}`);
    const envelopes = JSON.parse(res.text) as DsseEnvelope[];
    for (const [i, envelope] of envelopes.entries()) {
      const payload = openEnvelope(envelope, publicKey);
      if (!payload) refused(audit.repo, branch, i, "no valid signature by the log's key");
      const parsed = checkStatement.safeParse(JSON.parse(payload.toString("utf8")));
      if (!parsed.success) refused(audit.repo, branch, i, "not an in-toto test-result statement");
      const { subject, predicate } = parsed.data;
      if (subject[0].name !== `${audit.repo}@${predicate.sequence}`)
        refused(
          audit.repo,
          branch,
          i,
          `its subject ${subject[0].name} is not this repo at ${predicate.sequence}`,
        );
      if (predicate.sequence > audit.checkpoint.size) continue;
      const proof_hashes = await proveIncluded(
        get,
        audit.repo,
        audit.checkpoint,
        predicate.sequence,
        subject[0].digest.sha256,
      );
      checked.push({
        branch,
        sequence: predicate.sequence,
        check_name: predicate.check_name,
        result: predicate.result,
        job: predicate.job.id,
        proof_hashes,
      });
    }
  }
  return checked;
}

/** What `--attestations` checked, one line each. */
export const attestationLines = (checks: VerifiedCheck[]): string[] =>
  checks.map(
    (c) =>
      `attestation ${c.check_name} ${c.result} at ${c.sequence} on ${c.branch} (job ${c.job}): signed by the log key, subject in the signed log (proof of ${c.proof_hashes} hash(es))`,
  );
