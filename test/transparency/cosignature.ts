import { generateKeyPairSync, sign } from "node:crypto";
import { parseNote, signatureLine, verifierKey } from "../../shared/transparency/note.ts";
import { rawEd25519 } from "../../shared/transparency/signer.ts";

/** One witness key for the tests that only need some valid cosignature (the route tables). */
const NAME = "tests.example/witness";
const keys = generateKeyPairSync("ed25519");
const publicKey = rawEd25519(keys.publicKey);

/** A valid `POST …/checkpoint/cosignatures` body for a checkpoint note the server served. */
export function cosignatureBody(note: string): { witness_key: string; checkpoint: string } {
  const { text } = parseNote(note);
  const line = signatureLine(NAME, publicKey, sign(null, Buffer.from(text), keys.privateKey));
  return { witness_key: verifierKey(NAME, publicKey), checkpoint: `${text}\n${line}` };
}
