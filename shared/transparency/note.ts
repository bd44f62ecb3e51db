import { createHash, createPublicKey, verify } from "node:crypto";

/**
 * C2SP signed notes (https://c2sp.org/signed-note) carrying C2SP checkpoints
 * (https://c2sp.org/tlog-checkpoint), Ed25519 only. A checkpoint's text is three lines: the origin
 * (the log's name), the tree size in decimal, the root hash in base64; then a blank line and one
 * line per signature: `— <key name> <base64(key hash (4 bytes) || signature)>`.
 */

/** The signature algorithm byte of Ed25519 in signed notes. */
const ED25519 = 0x01;
const EM_DASH = "\u2014";

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
}

/** The first four bytes of SHA-256(name || "\n" || 0x01 || public key): names the key in a signature line. */
export function keyHash(name: string, publicKey: Buffer): Buffer {
  return createHash("sha256")
    .update(Buffer.concat([Buffer.from(`${name}\n`), Buffer.from([ED25519]), publicKey]))
    .digest()
    .subarray(0, 4);
}

/** The verifier key string of signed notes: `<name>+<hex key hash>+<base64(0x01 || public key)>`. */
export function verifierKey(name: string, publicKey: Buffer): string {
  const encoded = Buffer.concat([Buffer.from([ED25519]), publicKey]).toString("base64");
  return `${name}+${keyHash(name, publicKey).toString("hex")}+${encoded}`;
}

/** Parses a verifier key string; throws on anything but an Ed25519 key whose hash matches its name. */
export function parseVerifierKey(vkey: string): { name: string; publicKey: Buffer } {
  // The key's base64 may hold '+' itself: only the first two separate fields.
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey.trim());
  const [, name, hash, encoded] = match ?? [];
  if (!name || !hash || !encoded) throw new Error("a verifier key is <name>+<hash>+<key>");
  const key = Buffer.from(encoded, "base64");
  if (key.length !== 33 || key[0] !== ED25519) throw new Error("the verifier key is not an Ed25519 key");
  const publicKey = key.subarray(1);
  if (keyHash(name, publicKey).toString("hex") !== hash)
    throw new Error("the verifier key's hash does not match it");
  return { name, publicKey };
}

/** The checkpoint's note text (what is signed). */
export const checkpointText = (c: Checkpoint): string =>
  `${c.origin}\n${c.size}\n${c.root.toString("base64")}\n`;

/** One signature line of a note. */
export function signatureLine(name: string, publicKey: Buffer, signature: Buffer): string {
  return `${EM_DASH} ${name} ${Buffer.concat([keyHash(name, publicKey), signature]).toString("base64")}\n`;
}

export interface SignedNote {
  text: string;
  signatures: { name: string; hash: Buffer; signature: Buffer }[];
}

/** Splits a signed note into its text and signature lines; throws on a malformed note. */
export function parseNote(note: string): SignedNote {
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n"))
    throw new Error("a signed note is its text, a blank line, then signature lines");
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split("\n");
  const signatures = lines.map((line) => {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    const bytes = Buffer.from(match?.[2] ?? "", "base64");
    if (!match?.[1] || bytes.length < 5)
      throw new Error(`not a signature line: ${JSON.stringify(line.slice(0, 80))}`);
    return { name: match[1], hash: bytes.subarray(0, 4), signature: bytes.subarray(4) };
  });
  return { text, signatures };
}

/** Parses a checkpoint's text (origin, size, root; extension lines are ignored). */
export function parseCheckpointText(text: string): Checkpoint {
  const [origin, size, root] = text.split("\n");
  if (!origin || !size || !/^\d{1,15}$/.test(size) || root === undefined)
    throw new Error("a checkpoint is an origin line, a tree size and a base64 root hash");
  const hash = Buffer.from(root, "base64");
  if (hash.length !== 32 || hash.toString("base64") !== root)
    throw new Error("the checkpoint's root is not a base64 SHA-256 hash");
  return { origin, size: Number(size), root: hash };
}

/**
 * Verifies a signed checkpoint against one key: its signature line must be there and valid.
 * Answers the checkpoint; throws, saying why, when it is malformed or not signed by that key.
 */
export function verifyCheckpoint(note: string, key: { name: string; publicKey: Buffer }): Checkpoint {
  const { text, signatures } = parseNote(note);
  const hash = keyHash(key.name, key.publicKey);
  const mine = signatures.find((s) => s.name === key.name && s.hash.equals(hash));
  if (!mine) throw new Error(`the checkpoint carries no signature by ${key.name}`);
  const publicKey = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: key.publicKey.toString("base64url") },
    format: "jwk",
  });
  if (!verify(null, Buffer.from(text), publicKey, mine.signature))
    throw new Error(`the checkpoint's signature by ${key.name} does not verify`);
  return parseCheckpointText(text);
}
