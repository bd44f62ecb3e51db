import { describe, expect, it } from "vitest";
import { kmsClient } from "../../shared/ci/identity/kms.ts";
import { kmsLogSigner } from "../../shared/transparency/kms.ts";
import { parseVerifierKey, verifyCheckpoint } from "../../shared/transparency/note.ts";
import { rawEd25519 } from "../../shared/transparency/signer.ts";
import { startFakeKms } from "../ci/identity/kms-fake.ts";
import { startTestApp } from "../support/app.ts";
import { useFixture, world } from "../support/world.ts";

const LOG_KEY = "projects/p/locations/global/keyRings/quire/cryptoKeys/log-ed25519/cryptoKeyVersions/1";
const RSA_KEY = "projects/p/locations/global/keyRings/quire/cryptoKeys/jobs/cryptoKeyVersions/1";

const kms = useFixture(() => startFakeKms([LOG_KEY, RSA_KEY]));
const app = useFixture(() =>
  startTestApp({ SVC_LOG_KMS_KEY_VERSION: LOG_KEY, SVC_LOG_KMS_ENDPOINT: kms.endpoint }),
);

describe("the log signed by a Cloud KMS EC_SIGN_ED25519 key, through @google-cloud/kms against the gRPC fake", () => {
  it("publishes the KMS key and signs each checkpoint with it once; no local key is made", async () => {
    const key = parseVerifierKey((await app.anonymous.get("/.well-known/quire-log-key")).body as string);
    expect(key.publicKey.equals(rawEd25519(kms.publicKey(LOG_KEY)))).toBe(true);
    const repo = await world(app).repo();
    await repo.commit("main", { "a.md": "a" });
    const before = kms.signCalls;
    const note = (await repo.client.get(`${repo.base}/checkpoint`)).body as string;
    expect(verifyCheckpoint(note, key).size).toBe(1);
    expect(kms.signCalls).toBe(before + 1);
    // Ed25519 is deterministic: the same checkpoint read again is signed from memory.
    expect((await repo.client.get(`${repo.base}/checkpoint`)).body).toBe(note);
    expect(kms.signCalls).toBe(before + 1);
    expect(await app.sql("SELECT 1 FROM tlog_signing_keys")).toEqual([]);
  });

  it("refuses a signature whose checksum shows it was corrupted on the way, and a key of another kind", async () => {
    const client = kmsClient(kms.endpoint);
    try {
      kms.corruptSignatures = true;
      await expect(kmsLogSigner(client, LOG_KEY).sign(Buffer.from("note"))).rejects.toThrow(
        "the signature from KMS does not match its CRC32C",
      );
      kms.corruptSignatures = false;
      await expect(kmsLogSigner(client, RSA_KEY).publicKey()).rejects.toThrow(
        `KMS key ${RSA_KEY} is RSA_SIGN_PKCS1_2048_SHA256, not EC_SIGN_ED25519`,
      );
    } finally {
      kms.corruptSignatures = false;
      await client.close();
    }
  });
});
