import { execFile } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type DsseEnvelope, keyIdOf, pae } from "../../shared/attestations/dsse.ts";
import { rawEd25519 } from "../../shared/transparency/signer.ts";

// The independent DSSE verifier: emulators/dsse-verify, go-securesystemslib's dsse package, built
// from the Go module proxy into .tools/bin by emulators/install.sh. QUIRE_DSSE_VERIFY names another
// build, for a checkout whose tools folder is shared and older than this one.
export const GO_DSSE_VERIFIER =
  process.env["QUIRE_DSSE_VERIFY"] ?? path.resolve(import.meta.dirname, "../../.tools/bin/dsse-verify");
const run = promisify(execFile);

/** Runs the Go verifier on `envelopes` with the log's verifier key. */
export async function goVerifyEnvelopes(
  envelopes: DsseEnvelope[],
  vkey: string,
): Promise<{ ok: boolean; out: string }> {
  if (!existsSync(GO_DSSE_VERIFIER)) throw new Error(`${GO_DSSE_VERIFIER} is missing: run npm run emulators`);
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), "dsse-")), "envelopes.json");
  await writeFile(file, JSON.stringify(envelopes));
  try {
    const { stdout } = await run(GO_DSSE_VERIFIER, ["-key", vkey, "-file", file]);
    return { ok: true, out: stdout.trim() };
  } catch (e) {
    return { ok: false, out: String((e as { stdout?: string }).stdout ?? e).trim() };
  }
}

/** The envelope with its payload replaced and re-signed by a fresh key, named as that key. */
export function resignedWithAnotherKey(envelope: DsseEnvelope, payload?: Buffer): DsseEnvelope {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const body = payload ?? Buffer.from(envelope.payload, "base64");
  const sig = sign(null, pae(envelope.payloadType, body), privateKey);
  return {
    payloadType: envelope.payloadType,
    payload: body.toString("base64"),
    signatures: [{ keyid: keyIdOf(rawEd25519(publicKey)), sig: sig.toString("base64") }],
  };
}

/** The envelope with one field of its statement changed, keeping the service's signature. */
export function withChangedPayload(
  envelope: DsseEnvelope,
  change: (s: Record<string, any>) => void,
): DsseEnvelope {
  const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString());
  change(statement);
  return { ...envelope, payload: Buffer.from(JSON.stringify(statement)).toString("base64") };
}
