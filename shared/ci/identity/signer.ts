import { createPrivateKey, generateKeyPair, type KeyObject, randomUUID, sign } from "node:crypto";
import { promisify } from "node:util";
import type pg from "pg";
import type { Clock } from "../../clock.ts";
import { withTx } from "../../db/tx.ts";

/** One public key of the job-token JWKS. */
export interface JWK {
  kty: "RSA";
  n: string;
  e: string;
  kid: string;
  alg: "RS256";
  use: "sig";
}

/**
 * Signs CI job OIDC JWTs (RS256). Two implementations: a local RSA key kept in the database
 * (`localJobSigner`) and a Cloud KMS asymmetric key (`kmsJobSigner`, shared/ci/identity/kms.ts).
 */
export interface JobSigner {
  /** The `kid` of the key `sign` uses now. */
  keyId(): Promise<string>;
  /** The RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signature of `signingInput`. */
  sign(signingInput: Buffer): Promise<Buffer>;
  /** The current key and every retired key that may still have unexpired tokens. */
  publicJwks(): Promise<JWK[]>;
  /** Releases what the signer holds open (the KMS client's channel). */
  close?(): Promise<void>;
}

/** Job tokens live one hour (SPEC, Authentication 5). */
export const JOB_TOKEN_TTL_SECONDS = 3600;

/**
 * How long an instance uses its cached copy of the active local key before reading it again. A key
 * retired by another instance may still sign for this long, so retired keys stay in the JWKS for
 * the token lifetime plus this.
 */
export const LOCAL_KEY_CACHE_MS = 5 * 60_000;

/** A retired local key leaves the JWKS this long after `retired_at`. */
export const RETIRED_KEY_GRACE_MS = JOB_TOKEN_TTL_SECONDS * 1000 + LOCAL_KEY_CACHE_MS;

/** The public half of an RSA key as a JWK of the job-token JWKS. */
export function publicJwkOf(key: KeyObject, kid: string): JWK {
  const jwk = key.export({ format: "jwk" });
  if (jwk.kty !== "RSA" || !jwk.n || !jwk.e) throw new Error("the job signing key is not an RSA key");
  return { kty: "RSA", n: jwk.n, e: jwk.e, kid, alg: "RS256", use: "sig" };
}

interface ActiveKey {
  kid: string;
  key: KeyObject;
  readAt: number;
}

const generateRsa = promisify(generateKeyPair);

// Rotations take turns: the second waits, then retires the first one's fresh key instead of
// colliding with it on the one-active-key index.
export const ROTATION_LOCK = 7_137_400_520_193_512_002n;

/** Creates a fresh key and retires the active one; the old key stays in the JWKS for its grace time. */
export async function rotateLocalJobKey(pool: pg.Pool, now: Date): Promise<string> {
  const row = await newKeyRow();
  await withTx(pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [ROTATION_LOCK.toString()]);
    await tx.query("UPDATE job_signing_keys SET retired_at = $1 WHERE retired_at IS NULL", [now]);
    await tx.query(
      "INSERT INTO job_signing_keys (kid, private_pem, public_jwk, created_at) VALUES ($1, $2, $3, $4)",
      [row.kid, row.pem, row.jwk, now],
    );
  });
  return row.kid;
}

async function newKeyRow(): Promise<{ kid: string; pem: string; jwk: JWK }> {
  const { privateKey, publicKey } = await generateRsa("rsa", { modulusLength: 2048 });
  const kid = randomUUID();
  const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  return { kid, pem, jwk: publicJwkOf(publicKey, kid) };
}

/**
 * Local mode: an RSA 2048 key generated on first use and kept in `job_signing_keys`, so every
 * instance on one database and every restart sign with the same key. Concurrent first use agrees
 * on one key (a partial unique index allows one active row; losers read the winner's).
 */
export function localJobSigner(pool: pg.Pool, clock: Clock): JobSigner {
  let cached: ActiveKey | undefined;
  let loading: Promise<ActiveKey> | undefined;

  async function readActive(): Promise<{ kid: string; private_pem: string } | undefined> {
    const { rows } = await pool.query<{ kid: string; private_pem: string }>(
      "SELECT kid, private_pem FROM job_signing_keys WHERE retired_at IS NULL",
    );
    return rows[0];
  }

  async function load(): Promise<ActiveKey> {
    let row = await readActive();
    if (!row) {
      const fresh = await newKeyRow();
      await pool.query(
        "INSERT INTO job_signing_keys (kid, private_pem, public_jwk, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        [fresh.kid, fresh.pem, fresh.jwk, clock.now()],
      );
      row = await readActive();
      if (!row) throw new Error("no active job signing key after inserting one");
    }
    return { kid: row.kid, key: createPrivateKey(row.private_pem), readAt: Date.now() };
  }

  async function active(): Promise<ActiveKey> {
    if (cached && Date.now() - cached.readAt < LOCAL_KEY_CACHE_MS) return cached;
    loading ??= load().finally(() => {
      loading = undefined;
    });
    cached = await loading;
    return cached;
  }

  return {
    keyId: async () => (await active()).kid,
    sign: async (input) => sign("sha256", input, (await active()).key),
    async publicJwks() {
      await active();
      const since = new Date(clock.now().getTime() - RETIRED_KEY_GRACE_MS);
      const { rows } = await pool.query<{ public_jwk: JWK }>(
        `SELECT public_jwk FROM job_signing_keys
          WHERE retired_at IS NULL OR retired_at > $1
          ORDER BY retired_at IS NOT NULL, created_at DESC`,
        [since],
      );
      return rows.map((r) => r.public_jwk);
    },
  };
}
