import { type Checkpoint, parseVerifierKey, verifyCheckpoint } from "../../shared/transparency/note.ts";
import { verifyConsistency, verifyInclusion } from "../../shared/transparency/verify.ts";
import { CliError } from "../errors.ts";
import type { CheckpointStore } from "./store.ts";

/**
 * The CLI's side of verifiable history (docs/verifiable-history.md): on the first contact with a
 * repo in a process, fetch its signed checkpoint, check the signature against the log key pinned
 * for the server, prove with the server's consistency proof that it extends the checkpoint
 * remembered from last time, and remember the new one. A server that rewrote or forked the
 * history cannot produce that proof: the CLI refuses, naming both checkpoints.
 */

/** A GET on the server with the CLI's credentials: status and body text. */
export type LogGet = (path: string) => Promise<{ status: number; text: string }>;

export interface Audit {
  repo: string;
  keyName: string;
  checkpoint: Checkpoint;
  /** The names of the witnesses whose cosignature the reader required, each verified. */
  witnesses: string[];
  /** The checkpoint remembered before this contact, and the proof's size that tied the two. */
  previous?: { checkpoint: Checkpoint; seenAt: string; proofHashes: number };
}

const describe = (c: Checkpoint) => `size ${c.size}, root ${c.root.toString("base64")}`;

const repoPath = (repo: string) => `/repos/${repo.split("/").map(encodeURIComponent).join("/")}/-`;

async function getJson<T>(get: LogGet, path: string): Promise<T> {
  const res = await get(path);
  if (res.status !== 200) throw new CliError(`GET ${path}: ${res.status} ${res.text.slice(0, 200)}`);
  return JSON.parse(res.text) as T;
}

/** The server's log key, pinned at first sight; a different key later is refused. */
async function logKey(get: LogGet, store: CheckpointStore, server: string) {
  const res = await get("/.well-known/quire-log-key");
  if (res.status !== 200) throw new CliError(`the server publishes no transparency-log key (${res.status})`);
  const served = res.text.trim();
  const pinned = await store.key(server);
  if (pinned && pinned !== served)
    throw new CliError(
      `the transparency-log key of ${server} changed: it was ${pinned}, it is now ${served}`,
      {
        hint: `if the operators rotated the key, remove ${server} from ${store.file} to trust the new one`,
      },
    );
  if (!pinned) await store.pinKey(server, served);
  return parseVerifierKey(served);
}

function refuse(
  repo: string,
  server: string,
  seen: Checkpoint,
  seenAt: string,
  now: Checkpoint,
  why: string,
): never {
  throw new CliError(
    `the history of ${repo} on ${server} does not extend the one seen before (${why}): ` +
      `checkpoint seen ${seenAt} (${describe(seen)}), checkpoint now (${describe(now)})`,
    { hint: "the server rewrote or forked the repo's history; keep both checkpoints and report it" },
  );
}

/**
 * Verifies the note's cosignature by each required witness key (docs/verifiable-history.md,
 * "Witnesses"); answers their names. A checkpoint without one is refused before it is remembered.
 */
function requireCosignatures(note: string, witnesses: string[], repo: string, server: string): string[] {
  return witnesses.map((vkey) => {
    let key: { name: string; publicKey: Buffer };
    try {
      key = parseVerifierKey(vkey);
    } catch (e) {
      throw new CliError(`the witness key ${vkey} is not valid: ${(e as Error).message}`, { exitCode: 2 });
    }
    try {
      verifyCheckpoint(note, key);
    } catch (e) {
      throw new CliError(
        `the checkpoint of ${repo} on ${server} has no valid cosignature by the witness ${key.name}: ${(e as Error).message}`,
        {
          hint: "a witness cosigns the latest size after it sees it: run `quire witness` for the repo (or wait for it), then retry",
        },
      );
    }
    return key.name;
  });
}

/**
 * Checks the repo's current checkpoint against the key and the remembered checkpoint, then
 * remembers it. Answers null when the repo is not there to check (404: no such repo, or one the
 * caller may not read), leaving the error to the request the command makes.
 */
export async function auditRepo(
  get: LogGet,
  store: CheckpointStore,
  server: string,
  repo: string,
  now: Date,
  witnesses: string[] = [],
): Promise<Audit | null> {
  const res = await get(`${repoPath(repo)}/checkpoint`);
  if (res.status === 404 || res.status === 401 || res.status === 403) return null;
  if (res.status !== 200) throw new CliError(`GET checkpoint of ${repo}: ${res.status}`);
  const key = await logKey(get, store, server);
  let checkpoint: Checkpoint;
  try {
    checkpoint = verifyCheckpoint(res.text, key);
  } catch (e) {
    throw new CliError(`the checkpoint of ${repo} on ${server} is not valid: ${(e as Error).message}`);
  }
  const audit: Audit = {
    repo,
    keyName: key.name,
    checkpoint,
    witnesses: requireCosignatures(res.text, witnesses, repo, server),
  };
  const remembered = await store.checkpoint(server, repo);
  if (remembered) {
    const seen = verifyCheckpoint(remembered.note, key);
    if (seen.origin !== checkpoint.origin)
      refuse(repo, server, seen, remembered.seen_at, checkpoint, `the origin was ${seen.origin}`);
    if (seen.size > checkpoint.size)
      refuse(repo, server, seen, remembered.seen_at, checkpoint, "the log shrank");
    const hashes =
      seen.size === 0 || seen.size === checkpoint.size
        ? []
        : (
            await getJson<{ hashes: string[] }>(
              get,
              `${repoPath(repo)}/proof/consistency?from=${seen.size}&to=${checkpoint.size}`,
            )
          ).hashes.map((h) => Buffer.from(h, "base64"));
    if (!verifyConsistency(seen.size, checkpoint.size, seen.root, checkpoint.root, hashes))
      refuse(repo, server, seen, remembered.seen_at, checkpoint, "its consistency proof does not hold");
    audit.previous = { checkpoint: seen, seenAt: remembered.seen_at, proofHashes: hashes.length };
  }
  await store.remember(server, repo, res.text, now);
  return audit;
}

/**
 * Proves that the commit at `sequence`, whose hash is `hashHex`, is in the checkpoint's tree;
 * answers the proof's length. Throws naming the commit when it is not.
 */
export async function proveIncluded(
  get: LogGet,
  repo: string,
  checkpoint: Checkpoint,
  sequence: number,
  hashHex: string,
): Promise<number> {
  const proof = await getJson<{ hashes: string[] }>(
    get,
    `${repoPath(repo)}/proof/inclusion?sequence=${sequence}&size=${checkpoint.size}`,
  );
  const hashes = proof.hashes.map((h) => Buffer.from(h, "base64"));
  if (!verifyInclusion(sequence - 1, checkpoint.size, Buffer.from(hashHex, "hex"), hashes, checkpoint.root))
    throw new CliError(
      `commit ${sequence} of ${repo} (hash ${hashHex}) is not in the signed log (${describe(checkpoint)})`,
      { hint: "the server shows a commit its signed history does not hold; report it" },
    );
  return hashes.length;
}

/** The repo named by a request path (`/repos/<repo>/-/…`), or null for any other path. */
export function repoOfPath(pathname: string): string | null {
  const m = /^\/repos\/(.+?)\/-\//.exec(pathname);
  return m?.[1] ? m[1].split("/").map(decodeURIComponent).join("/") : null;
}
