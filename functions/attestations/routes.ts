import { z } from "zod";
import { attestationListResponse } from "../../shared/api/attestations.ts";
import { branchName, sequenceParam } from "../../shared/api/names.ts";
import { listAttestations } from "../../shared/attestations/attestations.ts";
import { ok, route } from "../../shared/http/route.ts";

/** Check runs as signed attestations (docs/verifiable-history.md). */
export const attestationRoutes = [
  route({
    method: "GET",
    path: "/repos/:repo*/-/attestations",
    access: { repo: "reader" },
    summary:
      "The DSSE envelopes (in-toto test-result statements signed by the log's key) of the check verdicts CI jobs reported on a branch at sequences at or before `at` (default: its head), by sequence then check name",
    query: z.strictObject({ branch: branchName, at: sequenceParam.optional() }),
    responses: { 200: attestationListResponse },
    handler: async ({ ctx, repo, query }) =>
      ok(await listAttestations(ctx.pool, repo, { branch: query.branch, at: query.at })),
  }),
];
