import { Readable } from "node:stream";
import { z } from "zod";
import { sequenceParam } from "../../shared/api/names.ts";
import {
  consistencyProofResponse,
  cosignatureRequest,
  cosignatureResponse,
  inclusionProofResponse,
} from "../../shared/api/transparency.ts";
import { bytes } from "../../shared/http/responses.ts";
import { created, ok, type Reply, route } from "../../shared/http/route.ts";
import { addCosignature } from "../../shared/transparency/cosign.ts";
import {
  consistencyProof,
  inclusionProof,
  publishedLogKey,
  signedCheckpoint,
} from "../../shared/transparency/log.ts";

/** A short text answer, as a stream so the dispatcher sends it as it is rather than as JSON. */
function textReply(text: string, cacheControl: string): Reply {
  const body = Buffer.from(text);
  return {
    status: 200,
    stream: Readable.from([body]),
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "content-length": String(body.length),
      "cache-control": cacheControl,
      "x-content-type-options": "nosniff",
    },
  };
}

const treeSize = sequenceParam.refine((n) => n >= 1, "must be at least 1");

/** The repos' transparency logs (docs/verifiable-history.md): checkpoints and proofs. */
export const transparencyRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/checkpoint",
    access: { repo: "reader" },
    summary:
      "The repo's transparency-log checkpoint: a C2SP signed note (origin, tree size, base64 root hash, the log key's Ed25519 signature)",
    responses: { 200: bytes("text/plain") },
    // A checkpoint changes with every commit: readers must not be served a stale one.
    handler: async ({ ctx, repo }) => textReply(await signedCheckpoint(ctx, repo.repo), "no-store"),
  }),
  route({
    method: "POST",
    path: "/repos/:repo*/-/checkpoint/cosignatures",
    // Any signed-in reader: a stored cosignature verifies against the key it names over a
    // checkpoint the log signed, so it proves what it says whoever posts it; readers choose
    // which witness keys they trust (docs/verifiable-history.md, "Witnesses").
    access: { repo: "reader" },
    summary:
      "Add a witness's cosignature of one of the repo's checkpoints: a signed-note Ed25519 signature line by `witness_key` over the exact checkpoint text the log signed for that size",
    body: cosignatureRequest,
    responses: { 201: cosignatureResponse },
    handler: async ({ ctx, repo, body }) => created(await addCosignature(ctx, repo.repo, body)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/proof/inclusion",
    access: { repo: "reader" },
    summary:
      "The proof that the commit at `sequence` is leaf sequence - 1 of the repo's log of `size` leaves",
    query: z.strictObject({ sequence: treeSize, size: treeSize }),
    responses: { 200: inclusionProofResponse },
    handler: async ({ ctx, repo, query }) => ok(await inclusionProof(ctx.pool, repo.repo, query)),
  }),
  route({
    method: "GET",
    path: "/repos/:repo*/-/proof/consistency",
    access: { repo: "reader" },
    summary: "The proof that the repo's log of `from` leaves is a prefix of its log of `to` leaves",
    query: z.strictObject({ from: treeSize, to: treeSize }),
    responses: { 200: consistencyProofResponse },
    handler: async ({ ctx, repo, query }) => ok(await consistencyProof(ctx.pool, repo.repo, query)),
  }),
];

/** The log's public key, published beside the job-token keys (`/.well-known/`). */
export const logKeyRoutes = [
  route({
    method: "GET",
    path: "/.well-known/quire-log-key",
    access: "public",
    summary:
      "The transparency log's verifier key in signed-note form (<name>+<key hash>+<base64(0x01 || Ed25519 public key)>)",
    responses: { 200: bytes("text/plain") },
    handler: async ({ ctx }) => textReply(`${await publishedLogKey(ctx)}\n`, "public, max-age=300"),
  }),
];
