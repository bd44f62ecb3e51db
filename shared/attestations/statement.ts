import { z } from "zod";

/**
 * The in-toto Statement v1 a CI job's check verdict becomes (docs/verifiable-history.md), with the
 * test-result v0.1 predicate (github.com/in-toto/attestation, spec/predicates/test-result.md) and
 * Quire's own fields beside the standard ones.
 */
export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const TEST_RESULT_PREDICATE = "https://in-toto.io/attestation/test-result/v0.1";

export interface CheckVerdict {
  repo: string;
  branch: string;
  sequence: number;
  /** The hex hash of the commit at `sequence`: the log's leaf `sequence - 1`. */
  commitHash: string;
  checkName: string;
  status: "passed" | "failed";
  logUrl: string | null;
  job: { id: string; attempt: number };
  /** Not yet known to the server: the worker does not report it (null until it does). */
  imageDigest: string | null;
  /** The hex SHA-256 of the whole log the job stored for the check, or null when it stored none. */
  logDigest: string | null;
}

const hexDigest = z.string().regex(/^[0-9a-f]{64}$/);

/** What a verifier reads back out of a statement's JSON; anything else is refused. */
export const checkStatement = z.object({
  _type: z.literal(STATEMENT_TYPE),
  subject: z.tuple([z.object({ name: z.string(), digest: z.object({ sha256: hexDigest }) })]),
  predicateType: z.literal(TEST_RESULT_PREDICATE),
  // The standard test-result fields (passedTests, url, ...) ride along; Quire's own are checked.
  predicate: z.looseObject({
    result: z.enum(["PASSED", "FAILED"]),
    check_name: z.string(),
    repo: z.string(),
    branch: z.string(),
    sequence: z.int().positive(),
    job: z.object({ id: z.string(), attempt: z.int() }),
    image_digest: z.object({ sha256: hexDigest }).nullable(),
    log_digest: z.object({ sha256: hexDigest }).nullable(),
  }),
});
export type CheckStatement = z.output<typeof checkStatement>;

const digestOf = (hex: string | null) => (hex ? { sha256: hex } : null);

/** The statement for a verdict: its subject is the repo at the sequence, named `<repo>@<sequence>`. */
export function checkStatementOf(v: CheckVerdict): CheckStatement {
  const passed = v.status === "passed";
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: `${v.repo}@${v.sequence}`, digest: { sha256: v.commitHash } }],
    predicateType: TEST_RESULT_PREDICATE,
    predicate: {
      result: passed ? "PASSED" : "FAILED",
      // The standard fields of test-result v0.1: the check is the one test this statement covers.
      configuration: [],
      ...(v.logUrl ? { url: v.logUrl } : {}),
      passedTests: passed ? [v.checkName] : [],
      warnedTests: [],
      failedTests: passed ? [] : [v.checkName],
      check_name: v.checkName,
      repo: v.repo,
      branch: v.branch,
      sequence: v.sequence,
      job: v.job,
      image_digest: digestOf(v.imageDigest),
      log_digest: digestOf(v.logDigest),
    },
  };
}
