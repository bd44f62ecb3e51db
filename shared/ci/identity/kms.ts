import { createHash, createPublicKey } from "node:crypto";
import { KeyManagementServiceClient } from "@google-cloud/kms";
import { credentials } from "@grpc/grpc-js";
import { crc32c } from "./crc32c.ts";
import { type JobSigner, type JWK, publicJwkOf } from "./signer.ts";

/** The `kid` of a KMS key version: stable across instances and restarts, and reveals no name. */
export function kmsKeyId(keyVersion: string): string {
  return createHash("sha256").update(keyVersion).digest("base64url").slice(0, 22);
}

/**
 * A KMS client; `endpoint` (`host:port`, plaintext, no credentials) points it at a test server
 * instead of the real service.
 */
export function kmsClient(endpoint?: string): KeyManagementServiceClient {
  if (!endpoint) return new KeyManagementServiceClient();
  const at = endpoint.lastIndexOf(":");
  return new KeyManagementServiceClient({
    servicePath: endpoint.slice(0, at).replace(/^\[|\]$/g, ""),
    port: Number(endpoint.slice(at + 1)),
    sslCreds: credentials.createInsecure(),
    projectId: "emulator",
    universeDomain: "googleapis.com",
  });
}

export interface KmsSignerOptions {
  client: KeyManagementServiceClient;
  /** The RSA_SIGN_PKCS1_2048_SHA256 key version that signs. */
  keyVersion: string;
  /** Versions that signed before and may still have unexpired tokens: published, never used. */
  previousKeyVersions?: string[];
}

/**
 * Cloud mode: `asymmetricSign` over the SHA-256 digest with a KMS key version; the private key
 * never leaves KMS. Public keys come from `getPublicKey` and are cached for the process (a key
 * version's public key never changes).
 */
export function kmsJobSigner(opts: KmsSignerOptions): JobSigner {
  const { client, keyVersion } = opts;
  const versions = [keyVersion, ...(opts.previousKeyVersions ?? []).filter((v) => v !== keyVersion)];
  const jwks = new Map<string, Promise<JWK>>();

  function publicJwk(version: string): Promise<JWK> {
    let jwk = jwks.get(version);
    if (!jwk) {
      jwk = client.getPublicKey({ name: version }).then(([key]) => {
        if (!key.pem) throw new Error(`KMS returned no public key for ${version}`);
        if (key.algorithm && key.algorithm !== "RSA_SIGN_PKCS1_2048_SHA256")
          throw new Error(`KMS key ${version} is ${String(key.algorithm)}, not RSA_SIGN_PKCS1_2048_SHA256`);
        return publicJwkOf(createPublicKey(key.pem), kmsKeyId(version));
      });
      jwk.catch(() => jwks.delete(version));
      jwks.set(version, jwk);
    }
    return jwk;
  }

  return {
    keyId: async () => kmsKeyId(keyVersion),
    async sign(input) {
      const digest = createHash("sha256").update(input).digest();
      const [res] = await client.asymmetricSign({
        name: keyVersion,
        digest: { sha256: digest },
        digestCrc32c: { value: crc32c(digest) },
      });
      // KMS's integrity protocol: it confirms it received our digest intact, names the key it
      // used, and sends the signature's checksum. A token signed over corrupted bytes would fail
      // every verification later, far from the cause; here it is an error at once.
      if (!res.signature || res.signature.length === 0) throw new Error("KMS returned no signature");
      const signature = Buffer.from(res.signature as Uint8Array);
      if (!res.verifiedDigestCrc32c) throw new Error("KMS did not verify the digest's CRC32C");
      if (res.name !== keyVersion) throw new Error(`KMS signed with ${String(res.name)}, not ${keyVersion}`);
      if (Number(res.signatureCrc32c?.value) !== crc32c(signature))
        throw new Error("the signature from KMS does not match its CRC32C");
      return signature;
    },
    publicJwks: () => Promise.all(versions.map(publicJwk)),
    close: () => client.close(),
  };
}
