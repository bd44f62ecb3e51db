import { verify } from "node:crypto";
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { signJobToken } from "../../../shared/ci/identity/jwt.ts";
import { kmsClient, kmsJobSigner, kmsKeyId } from "../../../shared/ci/identity/kms.ts";
import { startTestApp } from "../../support/app.ts";
import { useFixture } from "../../support/world.ts";
import { claims } from "./claims.ts";
import { startFakeKms } from "./kms-fake.ts";

const V1 = "projects/p/locations/global/keyRings/ci/cryptoKeys/jobs/cryptoKeyVersions/1";
const V2 = "projects/p/locations/global/keyRings/ci/cryptoKeys/jobs/cryptoKeyVersions/2";

const kms = useFixture(() => startFakeKms([V1, V2]));

describe("KMS job signer, through @google-cloud/kms against a gRPC fake", () => {
  it("signs with asymmetricSign: the signature verifies with the version's public key", async () => {
    const client = kmsClient(kms.endpoint);
    try {
      const signer = kmsJobSigner({ client, keyVersion: V2 });
      const input = Buffer.from("header.payload");
      const signature = await signer.sign(input);
      expect(verify("sha256", input, kms.publicKey(V2), signature)).toBe(true);
      expect(verify("sha256", input, kms.publicKey(V1), signature)).toBe(false);
      expect(kms.signCalls).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("has a stable kid derived from the key version, and publishes current and previous keys", async () => {
    const client = kmsClient(kms.endpoint);
    try {
      const signer = kmsJobSigner({ client, keyVersion: V2, previousKeyVersions: [V1] });
      const again = kmsJobSigner({ client, keyVersion: V2 });
      expect(await signer.keyId()).toBe(await again.keyId());
      expect(await signer.keyId()).toBe(kmsKeyId(V2));
      expect(kmsKeyId(V1)).not.toBe(kmsKeyId(V2));
      const keys = await signer.publicJwks();
      expect(keys.map((k) => k.kid)).toEqual([kmsKeyId(V2), kmsKeyId(V1)]);
      for (const k of keys) {
        expect(k).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
        expect(Object.keys(k).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
      }
      const token = await signJobToken(signer, claims(), new Date());
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet({ keys }), {
        issuer: claims().iss,
        audience: claims().aud,
        algorithms: ["RS256"],
      });
      expect(protectedHeader).toEqual({ alg: "RS256", typ: "JWT", kid: kmsKeyId(V2) });
      expect(payload.sub).toBe(claims().sub);
    } finally {
      await client.close();
    }
  });

  it("fails when the key version does not exist", async () => {
    const client = kmsClient(kms.endpoint);
    try {
      const signer = kmsJobSigner({ client, keyVersion: `${V1}0` });
      await expect(signer.sign(Buffer.from("x"))).rejects.toThrow();
    } finally {
      await client.close();
    }
  });

  it("checks KMS's integrity fields: a signature corrupted in transit, or one by another key version, is an error", async () => {
    const client = kmsClient(kms.endpoint);
    const signer = kmsJobSigner({ client, keyVersion: V2 });
    try {
      kms.corruptSignatures = true;
      await expect(signer.sign(Buffer.from("x"))).rejects.toThrow(/CRC32C/);
      kms.corruptSignatures = false;
      kms.answerAsVersion = V1;
      await expect(signer.sign(Buffer.from("x"))).rejects.toThrow(/signed with/);
      kms.answerAsVersion = undefined;
      await expect(signer.sign(Buffer.from("x"))).resolves.toHaveLength(256);
    } finally {
      kms.corruptSignatures = false;
      kms.answerAsVersion = undefined;
      await signer.close?.();
    }
  });

  it("computes CRC32C as KMS does (the Castagnoli check value)", async () => {
    const { crc32c } = await import("../../../shared/ci/identity/crc32c.ts");
    expect(crc32c(Buffer.from("123456789"))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it("is what an app configured with SVC_JOB_SIGNER=kms signs and publishes with", async () => {
    const app = await startTestApp({
      SVC_JOB_SIGNER: "kms",
      SVC_JOB_KMS_KEY_VERSION: V2,
      SVC_JOB_KMS_PREVIOUS_KEY_VERSIONS: V1,
      SVC_JOB_KMS_ENDPOINT: kms.endpoint,
    });
    try {
      const jwks = (await app.anonymous.get("/.well-known/jwks.json")).body as { keys: { kid: string }[] };
      expect(jwks.keys.map((k) => k.kid)).toEqual([kmsKeyId(V2), kmsKeyId(V1)]);
      const token = await signJobToken(
        app.server.ctx.jobSigner,
        claims({ iss: "https://issuer.test" }),
        new Date(),
      );
      const { protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks as never), {
        issuer: "https://issuer.test",
      });
      expect(protectedHeader.kid).toBe(kmsKeyId(V2));
    } finally {
      await app.close();
    }
  });
});
