import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import type pg from "pg";
import { retryingOnce } from "../lazy.ts";

/**
 * Signs for the transparency log: checkpoints now, and any other statement of the service later
 * (DSSE envelopes sign their PAE bytes the same way). Ed25519, as the signed-note format defines
 * (C2SP signed-note, algorithm 0x01). Two implementations: a local key kept in the database
 * (`localLogSigner`) and a Cloud KMS `EC_SIGN_ED25519` key version (shared/transparency/kms.ts).
 */
export interface LogSigner {
  /** The raw 32-byte Ed25519 public key. */
  publicKey(): Promise<Buffer>;
  /** The Ed25519 signature (64 bytes) of `message` itself (pure Ed25519: no prehash). */
  sign(message: Buffer): Promise<Buffer>;
  /** Releases what the signer holds open (the KMS client's channel). */
  close?(): Promise<void>;
}

/** The raw 32 bytes of an Ed25519 public key. */
export function rawEd25519(key: KeyObject): Buffer {
  const jwk = key.export({ format: "jwk" });
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.x)
    throw new Error("the log key is not an Ed25519 key");
  return Buffer.from(jwk.x, "base64url");
}

/**
 * Local mode: an Ed25519 key generated at first use and kept in `tlog_signing_keys`, so every
 * instance on one database and every restart sign with the same key (a checkpoint signed by a
 * key that changed on restart would look like a forged one to every client that remembers).
 */
export function localLogSigner(pool: pg.Pool): LogSigner {
  const readPem = async () =>
    (await pool.query<{ private_pem: string }>("SELECT private_pem FROM tlog_signing_keys")).rows[0]
      ?.private_pem;
  const key = retryingOnce(async () => {
    let pem = await readPem();
    if (!pem) {
      const fresh = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" });
      await pool.query("INSERT INTO tlog_signing_keys (private_pem) VALUES ($1) ON CONFLICT DO NOTHING", [
        fresh.toString(),
      ]);
      pem = await readPem();
    }
    if (!pem) throw new Error("no log signing key after inserting one");
    const privateKey = createPrivateKey(pem);
    return { privateKey, publicKey: rawEd25519(createPublicKey(privateKey)) };
  });
  // Loaded now, while the pool is idle. Loaded at first use, the key would be read inside a
  // request's transaction (a check verdict's attestation, a merge's verified attestations) on a
  // second connection while the transaction holds one: as many such requests as the pool has
  // connections, arriving together, would each wait for a connection the others hold. A failed
  // load (a database not migrated yet) is tried again at first use.
  key().catch(() => {});
  return {
    publicKey: async () => (await key()).publicKey,
    sign: async (message) => sign(null, message, (await key()).privateKey),
  };
}
