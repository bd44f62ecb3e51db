import { createPublicKey } from "node:crypto";
import type { KeyManagementServiceClient } from "@google-cloud/kms";
import { crc32c } from "../ci/identity/crc32c.ts";
import { type LogSigner, rawEd25519 } from "./signer.ts";

/**
 * Cloud mode: `asymmetricSign` with an `EC_SIGN_ED25519` key version. Ed25519 signs the message
 * itself (KMS takes `data`, not a digest); the private key never leaves KMS. The public key comes
 * from `getPublicKey` once per process (a key version's public key never changes).
 */
export function kmsLogSigner(client: KeyManagementServiceClient, keyVersion: string): LogSigner {
  let publicKey: Promise<Buffer> | undefined;
  return {
    publicKey() {
      publicKey ??= client.getPublicKey({ name: keyVersion }).then(([key]) => {
        if (!key.pem) throw new Error(`KMS returned no public key for ${keyVersion}`);
        if (key.algorithm && key.algorithm !== "EC_SIGN_ED25519")
          throw new Error(`KMS key ${keyVersion} is ${String(key.algorithm)}, not EC_SIGN_ED25519`);
        return rawEd25519(createPublicKey(key.pem));
      });
      publicKey.catch(() => {
        publicKey = undefined;
      });
      return publicKey;
    },
    async sign(message) {
      const [res] = await client.asymmetricSign({
        name: keyVersion,
        data: message,
        dataCrc32c: { value: crc32c(message) },
      });
      // KMS's integrity protocol, as for job tokens (shared/ci/identity/kms.ts): a checkpoint signed
      // over corrupted bytes would be refused by every reader, far from the cause.
      if (!res.signature || res.signature.length === 0) throw new Error("KMS returned no signature");
      const signature = Buffer.from(res.signature as Uint8Array);
      if (!res.verifiedDataCrc32c) throw new Error("KMS did not verify the data's CRC32C");
      if (res.name !== keyVersion) throw new Error(`KMS signed with ${String(res.name)}, not ${keyVersion}`);
      if (Number(res.signatureCrc32c?.value) !== crc32c(signature))
        throw new Error("the signature from KMS does not match its CRC32C");
      return signature;
    },
    close: () => client.close(),
  };
}
