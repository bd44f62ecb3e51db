import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keyIdOf, openEnvelope, pae, signEnvelope } from "../../shared/attestations/dsse.ts";
import { checkStatement, checkStatementOf } from "../../shared/attestations/statement.ts";
import { rawEd25519 } from "../../shared/transparency/signer.ts";

/** DSSE's pre-authentication encoding and our envelopes, without a server. */

const keyPair = () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    publicKey: rawEd25519(publicKey),
    signer: {
      publicKey: async () => rawEd25519(publicKey),
      sign: async (m: Buffer) => sign(null, m, privateKey),
    },
  };
};

describe("DSSE", () => {
  it("encodes PAE as the protocol's own example", () => {
    // github.com/secure-systems-lab/dsse protocol.md: lengths are byte counts in ASCII decimal.
    expect(pae("http://example.com/HelloWorld", Buffer.from("hello world")).toString()).toBe(
      "DSSEv1 29 http://example.com/HelloWorld 11 hello world",
    );
    expect(pae("t", Buffer.from("é")).toString()).toBe("DSSEv1 1 t 2 é");
  });

  it("opens an envelope signed by the key, and nothing else", async () => {
    const a = keyPair();
    const b = keyPair();
    const envelope = await signEnvelope(a.signer, "application/vnd.in-toto+json", Buffer.from("{}"));
    expect(envelope.signatures[0]?.keyid).toBe(keyIdOf(a.publicKey));
    expect(openEnvelope(envelope, a.publicKey)?.toString()).toBe("{}");
    expect(openEnvelope(envelope, b.publicKey)).toBeNull();
    // The type is signed too: the same payload read as another type is refused.
    expect(openEnvelope({ ...envelope, payloadType: "application/json" }, a.publicKey)).toBeNull();
  });

  it("builds a test-result statement its own schema reads back", () => {
    const statement = checkStatementOf({
      repo: "acme/docs",
      branch: "feature",
      sequence: 3,
      commitHash: "ab".repeat(32),
      checkName: "ci/test",
      status: "failed",
      logUrl: null,
      job: { id: "j1", attempt: 1 },
      imageDigest: null,
      logDigest: null,
    });
    expect(checkStatement.parse(JSON.parse(JSON.stringify(statement)))).toMatchObject({
      subject: [{ name: "acme/docs@3", digest: { sha256: "ab".repeat(32) } }],
      predicate: { result: "FAILED", failedTests: ["ci/test"], passedTests: [] },
    });
  });
});
