import type { JobTokenClaims } from "../../../shared/ci/identity/jwt.ts";

/** Claims of a job token as the token endpoint fills them in. */
export function claims(over: Partial<JobTokenClaims> = {}): JobTokenClaims {
  return {
    iss: "http://127.0.0.1:8080",
    sub: "repo:acme/docs:branch:main:check:lint",
    aud: "docstore",
    jti: "5f0c6a2e-3c55-4b3f-9d7e-0f4b1d3c2a10",
    job_id: "job-1",
    repo: "acme/docs",
    org: "acme",
    branch: "main",
    check_name: "lint",
    ref_type: "branch",
    sequence: 7,
    ...over,
  };
}
