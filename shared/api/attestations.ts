import { z } from "zod";

/** A DSSE envelope (docs/verifiable-history.md): an in-toto Statement signed by the log's key. */
export const dsseEnvelope = z.object({
  payloadType: z.string(),
  payload: z.string(),
  signatures: z.array(z.object({ keyid: z.string(), sig: z.string() })),
});

export const attestationListResponse = z.array(dsseEnvelope);
export type AttestationListResponse = z.output<typeof attestationListResponse>;
