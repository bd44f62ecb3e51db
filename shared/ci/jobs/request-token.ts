import { createHash, randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { firstRowOf, prepared, type Queryable } from "../../db/pool.ts";
import { fail } from "../../errors.ts";
import { type JobRow, job_columns } from "./records.ts";

/**
 * Request tokens (SPEC, Authentication 6): 32 random bytes, base64url, handed out once by a claim.
 * Only the SHA-256 is stored, on the job row, so the token is bound to that job and its repo and
 * works exactly while that claim holds: completion and the reaper clear the hash.
 */

const TOKEN_BYTES = 32;
/** 32 bytes in base64url without padding. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A fresh request token and the hash to store. */
export function newRequestToken(): { token: string; hash: Buffer } {
  const token = randomBytes(TOKEN_BYTES).toString("base64url");
  return { token, hash: hashRequestToken(token) };
}

/** The stored form of a token. Lookups compare hashes, so no timing reveals the token itself. */
export function hashRequestToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/**
 * The hash of the request token in `Authorization: Bearer <token>`; 401 when the header is
 * missing or cannot be a request token, before any database work.
 */
function requestTokenHash(headers: IncomingHttpHeaders): Buffer {
  const header = headers.authorization;
  if (header === undefined || header === "")
    fail("UNAUTHENTICATED", "send the job's request token: 'Authorization: Bearer <request_token>'");
  const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  if (token === undefined || !TOKEN_SHAPE.test(token))
    fail("UNAUTHENTICATED", "the request token is missing, invalid or expired");
  return hashRequestToken(token);
}

const job_select_by_token = prepared<JobRow>(
  "job_select_by_token",
  `
  SELECT ${job_columns} FROM ci_jobs j JOIN repos r ON r.id = j.repo_id
  WHERE j.request_token_sha256 = $1 AND j.status = 'claimed'`,
);

/** The claimed job a request token belongs to; 401 for any token that holds no claim now. */
export async function requireClaimedJob(db: Queryable, headers: IncomingHttpHeaders): Promise<JobRow> {
  const job = await firstRowOf(db, job_select_by_token([requestTokenHash(headers)]));
  if (!job) fail("UNAUTHENTICATED", "the request token is missing, invalid or expired");
  return job;
}
