import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { KeyManagementServiceClient } from "@google-cloud/kms";
import { crc32c } from "../ci/identity/crc32c.ts";
import type { AppContext } from "../context.ts";
import { retryingOnce } from "../lazy.ts";
import { serverSecret } from "../secrets.ts";

/**
 * Envelope encryption of repo secrets (docs/secrets.md, "Encryption at rest"). Each value is
 * sealed with AES-256-GCM under a data key made for it alone; the data key is kept only wrapped
 * by a key-encryption key that never reaches the database: Cloud KMS when deployed
 * (SVC_SECRETS_KMS_KEY), else a local key. A row names the key that wrapped it (`key_ref`), so
 * rows sealed in development stay readable after KMS is configured, and KMS rotation (new primary
 * versions) needs nothing here: KMS finds the version from its own ciphertext.
 */

/** What the database keeps of one sealed value. */
export interface Sealed {
  ciphertext: Buffer;
  nonce: Buffer;
  tag: Buffer;
  wrappedKey: Buffer;
  keyRef: string;
}

/** Wraps and unwraps data keys with the key-encryption key. */
export interface KeyWrapper {
  /** The key new data keys are wrapped with: `local:<name>` or a KMS CryptoKey name. */
  readonly ref: string;
  wrap(dataKey: Buffer, aad: Buffer): Promise<Buffer>;
  unwrap(wrapped: Buffer, aad: Buffer, ref: string): Promise<Buffer>;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** The server secret (server_secrets) that is the local key-encryption key. */
const LOCAL_KEY_NAME = "repo-secrets-kek";
/** The `key_ref` of a row whose data key the local key wrapped. */
export const LOCAL_KEY_REF = `local:${LOCAL_KEY_NAME}`;

function gcmSeal(key: Buffer, plaintext: Buffer, aad: Buffer) {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce).setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { ciphertext, nonce, tag: cipher.getAuthTag() };
}

function gcmOpen(key: Buffer, sealed: { ciphertext: Buffer; nonce: Buffer; tag: Buffer }, aad: Buffer) {
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.nonce).setAAD(aad);
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
}

/**
 * Seals `value`. `aad` binds the ciphertext to its row (repo and name): a sealed value copied to
 * another repo or name in the database fails to open instead of being handed to that repo's jobs.
 */
export async function seal(keys: KeyWrapper, value: Buffer, aad: Buffer): Promise<Sealed> {
  const dataKey = randomBytes(32);
  try {
    const sealed = gcmSeal(dataKey, value, aad);
    return { ...sealed, wrappedKey: await keys.wrap(dataKey, aad), keyRef: keys.ref };
  } finally {
    dataKey.fill(0);
  }
}

/** The value of a sealed row; throws if any byte of it, or its `aad`, was changed. */
export async function open(keys: KeyWrapper, sealed: Sealed, aad: Buffer): Promise<Buffer> {
  const dataKey = await keys.unwrap(sealed.wrappedKey, aad, sealed.keyRef);
  try {
    return gcmOpen(dataKey, sealed, aad);
  } finally {
    dataKey.fill(0);
  }
}

/** The local key-encryption key: a random server secret every instance on the database shares. */
function localWrapper(ctx: AppContext) {
  const key = () => serverSecret(ctx, LOCAL_KEY_NAME);
  return {
    async wrap(dataKey: Buffer, aad: Buffer) {
      const { ciphertext, nonce, tag } = gcmSeal(await key(), dataKey, aad);
      return Buffer.concat([nonce, tag, ciphertext]);
    },
    async unwrap(wrapped: Buffer, aad: Buffer) {
      const nonce = wrapped.subarray(0, NONCE_BYTES);
      const tag = wrapped.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES);
      return gcmOpen(await key(), { nonce, tag, ciphertext: wrapped.subarray(NONCE_BYTES + TAG_BYTES) }, aad);
    },
  };
}

/**
 * Cloud KMS `Encrypt`/`Decrypt` with the CryptoKey `keyName`, checked with KMS's CRC32C integrity
 * fields both ways (a corrupted transfer is an error here, not a secret that fails later).
 */
function kmsWrapper(client: () => Promise<KeyManagementServiceClient>) {
  return {
    async wrap(dataKey: Buffer, aad: Buffer, keyName: string) {
      const [res] = await (await client()).encrypt({
        name: keyName,
        plaintext: dataKey,
        plaintextCrc32c: { value: crc32c(dataKey) },
        additionalAuthenticatedData: aad,
        additionalAuthenticatedDataCrc32c: { value: crc32c(aad) },
      });
      if (!res.ciphertext) throw new Error("KMS returned no ciphertext");
      const ciphertext = Buffer.from(res.ciphertext as Uint8Array);
      if (!res.verifiedPlaintextCrc32c || !res.verifiedAdditionalAuthenticatedDataCrc32c)
        throw new Error("KMS did not verify the CRC32C of what it encrypted");
      if (Number(res.ciphertextCrc32c?.value) !== crc32c(ciphertext))
        throw new Error("the ciphertext from KMS does not match its CRC32C");
      return ciphertext;
    },
    async unwrap(wrapped: Buffer, aad: Buffer, keyName: string) {
      const [res] = await (await client()).decrypt({
        name: keyName,
        ciphertext: wrapped,
        ciphertextCrc32c: { value: crc32c(wrapped) },
        additionalAuthenticatedData: aad,
        additionalAuthenticatedDataCrc32c: { value: crc32c(aad) },
      });
      if (!res.plaintext) throw new Error("KMS returned no plaintext");
      const plaintext = Buffer.from(res.plaintext as Uint8Array);
      if (Number(res.plaintextCrc32c?.value) !== crc32c(plaintext))
        throw new Error("the plaintext from KMS does not match its CRC32C");
      return plaintext;
    },
  };
}

// One per context (one per process in production), so the KMS client is made once.
const wrappers = new WeakMap<AppContext, KeyWrapper>();

/**
 * The key wrapper the configuration names: KMS with SVC_SECRETS_KMS_KEY, else the local key. The
 * KMS client (gRPC and its protos) loads at the first secret set or opened, not in every process.
 */
export function keyWrapperOf(ctx: AppContext): KeyWrapper {
  const known = wrappers.get(ctx);
  if (known) return known;
  const wrapper = keyWrapperFromConfig(ctx);
  wrappers.set(ctx, wrapper);
  return wrapper;
}

function keyWrapperFromConfig(ctx: AppContext): KeyWrapper {
  const local = localWrapper(ctx);
  const kmsKey = ctx.config.SVC_SECRETS_KMS_KEY;
  const client = retryingOnce(async () => {
    const { kmsClient } = await import("../ci/identity/kms.ts");
    return kmsClient(ctx.config.SVC_SECRETS_KMS_ENDPOINT);
  });
  const kms = kmsWrapper(client);
  return {
    ref: kmsKey ?? LOCAL_KEY_REF,
    wrap: (dataKey, aad) => (kmsKey ? kms.wrap(dataKey, aad, kmsKey) : local.wrap(dataKey, aad)),
    unwrap: (wrapped, aad, ref) =>
      ref === LOCAL_KEY_REF ? local.unwrap(wrapped, aad) : kms.unwrap(wrapped, aad, ref),
  };
}
