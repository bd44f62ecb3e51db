import {
  type CompactJWSHeaderParameters,
  createLocalJWKSet,
  decodeJwt,
  type FlattenedJWSInput,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from "jose";
import { jobIssuer } from "../ci/urls.ts";
import type { AppContext } from "../context.ts";
import { prepared } from "../db/pool.ts";
import { fail } from "../errors.ts";
import type { Actor } from "./actor.ts";

/**
 * Job OIDC JWTs on the repo API (SPEC, Authentication 5; docs/ci-identity.md, "Job tokens on the
 * repo API"). What this context part is needed for: the issuer (whose default, the server's own
 * address, is known only once it listens, so it is read per call), the accepted audience, the
 * signing keys, the clock that says whether a token expired, and the database that says whether
 * its job still runs.
 */
export type JobTokenContext = Pick<AppContext, "config" | "selfUrl" | "pool" | "jobSigner" | "clock">;

export interface JobTokenVerifier {
  /**
   * Whether `token` presents itself as one of ours: its unverified `iss` is our job issuer. Says
   * nothing about whether it is genuine; anything else is left to the ID-token verifier.
   */
  claimsOurIssuer(ctx: JobTokenContext, token: string): boolean;
  /** The job actor of a genuine token whose job still holds the claim it was issued to; 401 otherwise. */
  verify(ctx: JobTokenContext, token: string): Promise<Actor>;
}

/**
 * Least time between two reads of the signer's keys caused by a `kid` the cached set does not have.
 * Counted apart from the ordinary reads, so the first token of a freshly rotated key makes one read
 * at once, while a flood of made-up `kid`s costs at most one read per this time.
 */
const UNKNOWN_KID_REFRESH_MS = 5_000;
/** A key set older than this is read again at the next token anyway. */
const KEYS_MAX_AGE_MS = 5 * 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const REQUIRED_CLAIMS = ["exp", "jti", "job_id", "repo", "branch", "sequence"];

// The issuance by jti, with its job and the job's repo as they are now. LEFT JOINs, so each way of
// failing gets its own message; one round trip either way.
const job_token_select = prepared(
  "job_token_select",
  `
  SELECT i.job_id::text, i.attempt AS issued_attempt, i.repo, i.branch, i.sequence,
         j.id IS NOT NULL AS job_exists, j.status, j.attempt, j.repo_id, j.trigger_branch,
         j.sequence AS job_sequence, r.name AS repo_name
  FROM ci_token_issuances i
  LEFT JOIN ci_jobs j ON j.id = i.job_id
  LEFT JOIN repos r ON r.id = j.repo_id
  WHERE i.jti = $1`,
);

interface IssuanceRow {
  job_id: string;
  issued_attempt: number;
  repo: string;
  branch: string;
  sequence: number;
  job_exists: boolean;
  status: string | null;
  attempt: number | null;
  repo_id: number | null;
  trigger_branch: string | null;
  job_sequence: number | null;
  repo_name: string | null;
}

type KeySet = ReturnType<typeof createLocalJWKSet>;

/**
 * Verifies job tokens against the signer's own public keys, read straight from `jobSigner` (no
 * HTTP round trip to our own JWKS) and kept for a while; a token naming a `kid` the cached set does
 * not have makes it read them again, at most every few seconds, so a flood of made-up `kid`s cannot
 * turn into a flood of key reads. RS256 only: `alg: none`, HS256 keyed with the public key and any
 * other algorithm are refused before a key is even chosen.
 */
export function createJobTokenVerifier(): JobTokenVerifier {
  let keys: KeySet | undefined;
  let loadedAt = 0;
  let unknownKidReloadAt = Number.NEGATIVE_INFINITY;
  let loading: Promise<KeySet> | undefined;

  function load(ctx: JobTokenContext): Promise<KeySet> {
    loading ??= ctx.jobSigner
      .publicJwks()
      .then((jwks) => {
        keys = createLocalJWKSet({ keys: jwks.map((k) => ({ ...k })) });
        loadedAt = performance.now();
        return keys;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  }

  const keyFor =
    (ctx: JobTokenContext) => async (header: CompactJWSHeaderParameters, token: FlattenedJWSInput) => {
      const cached = keys;
      const fresh = cached !== undefined && performance.now() - loadedAt < KEYS_MAX_AGE_MS;
      const set = fresh ? cached : await load(ctx);
      try {
        return await set(header, token);
      } catch (err) {
        const unknownKid = err instanceof joseErrors.JWKSNoMatchingKey;
        if (!unknownKid || performance.now() - unknownKidReloadAt < UNKNOWN_KID_REFRESH_MS) throw err;
        unknownKidReloadAt = performance.now();
        return (await load(ctx))(header, token);
      }
    };

  return {
    claimsOurIssuer(ctx, token) {
      const issuer = jobIssuer(ctx);
      try {
        return decodeJwt(token).iss === issuer;
      } catch {
        return false; // not a JWT at all: the ID-token verifier says what is wrong with it
      }
    },

    async verify(ctx, token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keyFor(ctx), {
          algorithms: ["RS256"],
          issuer: jobIssuer(ctx),
          audience: ctx.config.SVC_JOB_API_AUDIENCE,
          currentDate: ctx.clock.now(),
          requiredClaims: REQUIRED_CLAIMS,
        }));
      } catch (err) {
        // Anything else (the key table unreachable) is not the token's fault: 5xx, not 401.
        if (err instanceof joseErrors.JOSEError) fail("UNAUTHENTICATED", `invalid job token: ${err.message}`);
        throw err;
      }
      const claims = claimsOf(payload);
      const { rows } = await ctx.pool.query<IssuanceRow>(job_token_select([claims.jti]));
      const row = rows[0];
      if (!row) fail("UNAUTHENTICATED", "invalid job token: Quire has no record of issuing it");
      if (
        row.job_id !== claims.job_id.toLowerCase() ||
        row.repo !== claims.repo ||
        row.branch !== claims.branch ||
        row.sequence !== claims.sequence
      )
        fail("UNAUTHENTICATED", "invalid job token: its claims differ from the record of its issuance");
      // The job's columns are NOT NULL, so they are null exactly when the job is gone.
      const { repo_id: repoId, repo_name: repo, trigger_branch: branch, job_sequence: sequence } = row;
      if (!row.job_exists || repoId === null || repo === null || branch === null || sequence === null)
        fail("UNAUTHENTICATED", "invalid job token: its job or its repo no longer exists");
      if (row.status !== "claimed" || row.attempt !== row.issued_attempt)
        fail(
          "UNAUTHENTICATED",
          "invalid job token: its job is no longer running (completed, or given back to the queue since the token was issued)",
        );
      return {
        identity: `ci-job:${row.job_id}`,
        globalAdmin: false,
        job: {
          id: row.job_id,
          repoId,
          repo,
          branch,
          sequence,
          attempt: row.issued_attempt,
        },
      };
    },
  };
}

/** The claims the repo API relies on, with their types checked (a signed token of ours always has them). */
function claimsOf(payload: JWTPayload): {
  jti: string;
  job_id: string;
  repo: string;
  branch: string;
  sequence: number;
} {
  const { jti, job_id, repo, branch, sequence } = payload as Record<string, unknown>;
  if (
    typeof jti !== "string" ||
    !UUID.test(jti) ||
    typeof job_id !== "string" ||
    !UUID.test(job_id) ||
    typeof repo !== "string" ||
    typeof branch !== "string" ||
    typeof sequence !== "number" ||
    !Number.isSafeInteger(sequence)
  )
    fail("UNAUTHENTICATED", "invalid job token: malformed jti, job_id, repo, branch or sequence claim");
  return { jti, job_id, repo, branch, sequence };
}
