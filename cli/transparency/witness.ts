import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseNote, signatureLine, verifierKey } from "../../shared/transparency/note.ts";
import { rawEd25519 } from "../../shared/transparency/signer.ts";
import { CliError } from "../errors.ts";
import { auditRepo, type LogGet } from "./audit.ts";
import { CheckpointStore } from "./store.ts";

/**
 * The witness (docs/verifiable-history.md, "Witnesses"): for each repo, fetch the checkpoint, check
 * it as every CLI contact does (the log key pinned at first sight, a consistency proof from the
 * last checkpoint this witness accepted, kept in its own `witness.json`), then sign its exact text
 * with the witness's Ed25519 key as a plain signed-note signature and post that line to the server.
 * A witness never signs a checkpoint that does not extend the one it signed before, so two readers
 * who each require its cosignature cannot be shown two different histories.
 */

export interface WitnessKey {
  name: string;
  /** The verifier key, `<name>+<hash>+<base64(0x01 || public key)>`. */
  vkey: string;
  sign(text: string): string;
}

interface KeyFile {
  name: string;
  private_pem: string;
}

const KEY_FILE = "witness-key.json";
/** Signed-note key names: no whitespace, no '+'. */
const KEY_NAME = /^[^\s+]{1,100}$/;

export const defaultWitnessName = (): string => `${os.hostname().replace(/[\s+]/g, "-")}/witness`;

function witnessKey(file: KeyFile): WitnessKey {
  const privateKey = createPrivateKey(file.private_pem);
  const publicKey = rawEd25519(createPublicKey(privateKey));
  return {
    name: file.name,
    vkey: verifierKey(file.name, publicKey),
    sign: (text) => signatureLine(file.name, publicKey, sign(null, Buffer.from(text), privateKey)),
  };
}

/**
 * The witness's key, `<config dir>/witness-key.json`, created at first use under `name` (only
 * then: a key's name is part of its identity). Written 0600 through a rename.
 */
export async function loadWitnessKey(dir: string, name = defaultWitnessName()): Promise<WitnessKey> {
  const file = path.join(dir, KEY_FILE);
  try {
    return witnessKey(JSON.parse(await readFile(file, "utf8")) as KeyFile);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      throw new CliError(`cannot read the witness key ${file}: ${(e as Error).message}`);
  }
  if (!KEY_NAME.test(name))
    throw new CliError(`a witness name has no spaces or '+': ${JSON.stringify(name)}`, { exitCode: 2 });
  const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ name, private_pem: pem }, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return loadWitnessKey(dir);
}

/** The witness's own memory of the checkpoints it accepted: same shape as the CLI's, another file. */
export const witnessState = (dir: string): CheckpointStore => new CheckpointStore(dir, "witness.json");

export type LogPost = (path: string, body: unknown) => Promise<{ status: number; text: string }>;

export interface Cosigned {
  repo: string;
  origin: string;
  size: number;
  root: string;
  /** The size of the checkpoint accepted before, from which consistency was proved. */
  previous_size: number | null;
}

const repoPath = (repo: string) => `/repos/${repo.split("/").map(encodeURIComponent).join("/")}/-`;

/** Checks the repo's checkpoint and posts the witness's cosignature of it. */
export async function witnessRepo(
  io: { get: LogGet; post: LogPost },
  state: CheckpointStore,
  key: WitnessKey,
  server: string,
  repo: string,
): Promise<Cosigned> {
  const audit = await auditRepo(io.get, state, server, repo, new Date());
  if (!audit) throw new CliError(`${repo} is not on ${server}, or you may not read it`);
  const remembered = await state.checkpoint(server, repo);
  if (!remembered) throw new Error(`the witness state lost ${repo} just after remembering it`);
  const text = parseNote(remembered.note).text;
  const note = `${text}\n${key.sign(text)}`;
  const res = await io.post(`${repoPath(repo)}/checkpoint/cosignatures`, {
    witness_key: key.vkey,
    checkpoint: note,
  });
  if (res.status !== 201)
    throw new CliError(
      `the server refused the cosignature of ${repo}: ${res.status} ${res.text.slice(0, 300)}`,
    );
  const cp = audit.checkpoint;
  return {
    repo,
    origin: cp.origin,
    size: cp.size,
    root: cp.root.toString("base64"),
    previous_size: audit.previous?.checkpoint.size ?? null,
  };
}
