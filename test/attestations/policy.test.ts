import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { DsseEnvelope } from "../../shared/attestations/dsse.ts";
import { mint, startJobTokenApp } from "../ci/jobtoken/support.ts";
import { queueAndClaim } from "../ci/support.ts";
import { merge, statusOf } from "../merge/fixtures.ts";
import {
  commit,
  createBranch,
  errorOf,
  installPolicies,
  type RepoFixture,
  repoWithOwner,
  useFixture,
} from "../support/world.ts";
import { resignedWithAnotherKey, withChangedPayload } from "./support.ts";

/**
 * A merge gated by attestations (docs/policies/require_attested_checks.rego), through the real
 * opa over HTTP: a person's `passed` under the check's name does not open it, a CI job's signed
 * pass does, and an envelope re-signed with another key or changed under the service's signature
 * (written straight into the table, as whoever could reach the database would) does not.
 */

const app = useFixture(startJobTokenApp);
const shipped = readFile(
  new URL("../../docs/policies/require_attested_checks.rego", import.meta.url),
  "utf8",
);
let fx: RepoFixture;
let original: DsseEnvelope;

const gate = async () => {
  const status = await statusOf(fx, "feature");
  const policy = status.policies.find((p) => p.name === "require_attested_checks");
  if (!policy) throw new Error(`no require_attested_checks in ${JSON.stringify(status.policies)}`);
  return policy;
};
const report = async (client: typeof fx.client, status: string) => {
  const res = await client.post(`${fx.base}/check`, { branch: "feature", check_name: "ci/test", status });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};
const storeEnvelope = (envelope: DsseEnvelope) =>
  app.sql("UPDATE check_attestations SET envelope = $1 WHERE repo_id = $2", [
    JSON.stringify(envelope),
    fx.repoId,
  ]);

beforeAll(async () => {
  fx = await repoWithOwner(app);
  await commit(fx, "main", { "a.md": "# A\n" }, "first");
  await installPolicies(fx, { require_attested_checks: await shipped });
  await createBranch(fx, "feature");
  await commit(fx, "feature", { "b.md": "# B\n" }, "on feature");
});

describe("a merge gated by attested checks", { timeout: 60_000 }, () => {
  it("refuses a check status a person posted under the check's name", async () => {
    await report(fx.client, "passed");
    expect(await gate()).toEqual({
      name: "require_attested_checks",
      pass: false,
      reason: "needs a CI job's signed pass at the head for: ci/test",
    });
    expect(errorOf(await merge(fx, "feature", true)).code).toBe("POLICY_DENIED");
  });

  it("passes on the CI job's signed pass at the head", async () => {
    const { job } = await queueAndClaim(app, fx.repo, "feature", {
      checks: ["ci/test"],
      createdBy: fx.owner,
    });
    await report(app.bearer(await mint(app, job)), "passed");
    expect((await gate()).pass).toBe(true);
    const [row] = await app.sql<{ envelope: DsseEnvelope }>(
      "SELECT envelope FROM check_attestations WHERE repo_id = $1",
      [fx.repoId],
    );
    if (!row) throw new Error("no attestation row");
    original = row.envelope;
  });

  it("refuses an envelope re-signed with another key", async () => {
    await storeEnvelope(resignedWithAnotherKey(original));
    expect((await gate()).pass).toBe(false);
    expect(errorOf(await merge(fx, "feature", true)).code).toBe("POLICY_DENIED");
  });

  it("refuses a pass whose payload changed under the service's signature", async () => {
    // Still a pass of ci/test at the head, so only the signature can refuse it.
    await storeEnvelope(
      withChangedPayload(original, (s) => {
        s["predicate"]["job"]["id"] = "00000000-0000-4000-8000-000000000000";
      }),
    );
    expect((await gate()).pass).toBe(false);
  });

  it("merges once the job's own envelope is back", async () => {
    await storeEnvelope(original);
    const res = await merge(fx, "feature");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});
