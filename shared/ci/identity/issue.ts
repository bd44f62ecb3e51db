import { randomUUID } from "node:crypto";
import type { AppContext } from "../../context.ts";
import type { JobRow } from "../jobs/records.ts";
import { jobIssuer } from "../urls.ts";
import { type JobTokenClaims, signJobToken } from "./jwt.ts";
import { JOB_TOKEN_TTL_SECONDS } from "./signer.ts";

const issuance_insert = `
  INSERT INTO ci_token_issuances (jti, job_id, attempt, repo_id, repo, branch, sequence, check_name,
    audience, subject, key_id, issued_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

/** `repo:<org>/<repo>:branch:<branch>[:check:<check_name>]` (SPEC, Authentication 5). */
export function jobSubject(repo: string, branch: string, checkName?: string): string {
  return `repo:${repo}:branch:${branch}${checkName === undefined ? "" : `:check:${checkName}`}`;
}

/**
 * A job OIDC JWT for the claimed `job` (the token endpoint): RS256, one hour, a fresh `jti`, the
 * claims of the spec. The issuance is recorded in `ci_token_issuances` before the token is handed
 * out, so no token exists that the audit trail does not know.
 */
export async function issueJobToken(
  ctx: AppContext,
  job: JobRow,
  request: { audience: string; check_name?: string | undefined },
): Promise<string> {
  const now = ctx.clock.now();
  const org = job.repo.slice(0, job.repo.indexOf("/"));
  const claims: JobTokenClaims = {
    iss: jobIssuer(ctx),
    sub: jobSubject(job.repo, job.branch, request.check_name),
    aud: request.audience,
    jti: randomUUID(),
    job_id: job.id,
    repo: job.repo,
    org,
    branch: job.branch,
    ...(request.check_name === undefined ? {} : { check_name: request.check_name }),
    ref_type: "branch",
    sequence: job.sequence,
  };
  const keyId = await ctx.jobSigner.keyId();
  const token = await signJobToken(ctx.jobSigner, claims, now);
  const issuedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  await ctx.pool.query(issuance_insert, [
    claims.jti,
    job.id,
    job.attempt,
    job.repo_id,
    job.repo,
    job.branch,
    job.sequence,
    request.check_name ?? null,
    request.audience,
    claims.sub,
    keyId,
    issuedAt,
    new Date(issuedAt.getTime() + JOB_TOKEN_TTL_SECONDS * 1000),
  ]);
  return token;
}
