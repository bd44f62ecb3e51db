import { createHash, createPublicKey, verify } from "node:crypto";

/**
 * DSSE (Dead Simple Signing Envelope, github.com/secure-systems-lab/dsse, protocol v1): the
 * signature covers PAE(payloadType, payload), never the JSON around it, so re-encoding the
 * envelope cannot change what was signed and a payload cannot be read as another type.
 */
export interface DsseEnvelope {
  payloadType: string;
  /** Standard base64 of the payload's bytes. */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

/** PAE: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal bytes. */
export function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, "utf8"),
    type,
    Buffer.from(` ${payload.length} `, "utf8"),
    payload,
  ]);
}

/** A key's DSSE keyid: the hex SHA-256 of its raw 32-byte Ed25519 public key. */
export const keyIdOf = (publicKey: Buffer): string => createHash("sha256").update(publicKey).digest("hex");

/** Signs `payload` into an envelope with `sign` (pure Ed25519 over the PAE bytes). */
export async function signEnvelope(
  signer: { publicKey(): Promise<Buffer>; sign(message: Buffer): Promise<Buffer> },
  payloadType: string,
  payload: Buffer,
): Promise<DsseEnvelope> {
  const [publicKey, sig] = await Promise.all([signer.publicKey(), signer.sign(pae(payloadType, payload))]);
  return {
    payloadType,
    payload: payload.toString("base64"),
    signatures: [{ keyid: keyIdOf(publicKey), sig: sig.toString("base64") }],
  };
}

// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): what node:crypto takes.
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/**
 * The envelope's payload when one of its signatures is `publicKey`'s over PAE(type, payload), else
 * null. Signatures under other keyids are ignored, not trusted: a re-signed envelope fails here.
 */
export function openEnvelope(envelope: DsseEnvelope, publicKey: Buffer): Buffer | null {
  const key = createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]),
    format: "der",
    type: "spki",
  });
  const payload = Buffer.from(envelope.payload, "base64");
  const message = pae(envelope.payloadType, payload);
  const keyid = keyIdOf(publicKey);
  const signed = envelope.signatures.some(
    (s) => s.keyid === keyid && verify(null, message, key, Buffer.from(s.sig, "base64")),
  );
  return signed ? payload : null;
}
