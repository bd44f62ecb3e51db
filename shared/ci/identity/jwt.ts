import { JOB_TOKEN_TTL_SECONDS, type JobSigner } from "./signer.ts";

/** The claims of a CI job OIDC JWT (SPEC, Authentication 5), as the token endpoint decides them. */
export interface JobTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  jti: string;
  job_id: string;
  repo: string;
  org: string;
  branch: string;
  check_name?: string;
  ref_type: string;
  sequence: number;
}

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");

/**
 * A compact RS256 JWT over `claims`, with `iat` = `now` and `exp` one hour later, signed by
 * `signer`'s current key (its `kid` in the header).
 */
export async function signJobToken(signer: JobSigner, claims: JobTokenClaims, now: Date): Promise<string> {
  const kid = await signer.keyId();
  const iat = Math.floor(now.getTime() / 1000);
  const header = b64url({ alg: "RS256", typ: "JWT", kid });
  const payload = b64url({ ...claims, iat, exp: iat + JOB_TOKEN_TTL_SECONDS });
  const signingInput = `${header}.${payload}`;
  const signature = await signer.sign(Buffer.from(signingInput, "ascii"));
  return `${signingInput}.${signature.toString("base64url")}`;
}
