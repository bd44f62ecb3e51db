import { createHash, createPrivateKey, sign } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyAttestations } from "../../cli/transparency/attestations.ts";
import { auditRepo } from "../../cli/transparency/audit.ts";
import { fetchLogGet } from "../../cli/transparency/contact.ts";
import { CheckpointStore } from "../../cli/transparency/store.ts";
import { type DsseEnvelope, keyIdOf, openEnvelope, pae } from "../../shared/attestations/dsse.ts";
import { checkStatement } from "../../shared/attestations/statement.ts";
import { storeLog } from "../../shared/ci/jobs/logs.ts";
import type { JobRow } from "../../shared/ci/jobs/records.ts";
import { parseVerifierKey } from "../../shared/transparency/note.ts";
import { jobOnFeature, startJobTokenApp } from "../ci/jobtoken/support.ts";
import type { Client } from "../support/client.ts";
import { errorOf, type RepoFixture, useFixture } from "../support/world.ts";
import { goVerifyEnvelopes, resignedWithAnotherKey, withChangedPayload } from "./support.ts";

/**
 * Check runs as attestations (docs/verifiable-history.md): a CI job's verdict is signed into a
 * DSSE envelope beside its check run; a person's report is not. Both verifiers (ours and the Go
 * DSSE reference) accept the service's envelopes and refuse a re-signed or changed one.
 */

const app = useFixture(startJobTokenApp);
const LOG = "lint ok\n";
const IMAGE = `sha256:${"ab".repeat(32)}`;
let fx: RepoFixture;
let job: JobRow;
let jwt: Client;
let vkey: string;

const attestations = async (query = "branch=feature") => {
  const res = await fx.client.get(`${fx.base}/attestations?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as DsseEnvelope[];
};
const report = async (client: Client, body: Record<string, unknown>) => {
  const res = await client.post(`${fx.base}/check`, { branch: "feature", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};
const statementOf = (e: DsseEnvelope) =>
  checkStatement.parse(JSON.parse(Buffer.from(e.payload, "base64").toString()));

beforeAll(async () => {
  ({ fx, job, jwt } = await jobOnFeature(app));
  vkey = ((await app.anonymous.get("/.well-known/quire-log-key")).body as string).trim();
  await report(jwt, { check_name: "docs/lint", status: "pending" });
  // The whole log the job stores before its verdict, as the worker does.
  await storeLog(app.server.ctx, {
    jobId: job.id,
    checkName: "docs/lint",
    body: Buffer.from(LOG),
    contentType: "text/plain",
  });
  await report(jwt, {
    check_name: "docs/lint",
    status: "passed",
    log_url: "https://logs.example/1",
    image_digest: IMAGE,
  });
  // A person reports a check of the same kind: a bare status, never an attestation.
  await report(fx.client, { check_name: "docs/manual", status: "passed" });
});

describe("recording", () => {
  it("signs the job's final verdict, with the commit at the job's sequence as the subject", async () => {
    const [envelope, ...rest] = await attestations();
    expect(rest).toEqual([]);
    if (!envelope) throw new Error("no attestation");
    expect(envelope.payloadType).toBe("application/vnd.in-toto+json");
    const payload = openEnvelope(envelope, parseVerifierKey(vkey).publicKey);
    expect(payload).not.toBeNull();
    const statement = statementOf(envelope);
    const chain = await fx.client.get(`${fx.base}/chain?from=${job.sequence}&to=${job.sequence}`);
    const [commit] = (chain.body as { commits: { hash: string }[] }).commits;
    expect(statement.subject[0]).toEqual({
      name: `${fx.repo}@${job.sequence}`,
      digest: { sha256: commit?.hash },
    });
    expect(statement.predicate).toMatchObject({
      result: "PASSED",
      check_name: "docs/lint",
      branch: "feature",
      sequence: job.sequence,
      job: { id: job.id },
      url: "https://logs.example/1",
      passedTests: ["docs/lint"],
      log_digest: { sha256: createHash("sha256").update(LOG).digest("hex") },
      image_digest: { sha256: "ab".repeat(32) },
    });
  });

  it("takes the image digest only from a CI job's report, and only in the registries' form", async () => {
    const byPerson = await fx.client.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/manual",
      status: "passed",
      image_digest: IMAGE,
    });
    expect(errorOf(byPerson)).toMatchObject({ code: "VALIDATION_FAILED" });
    expect(errorOf(byPerson).error).toContain("body.image_digest");
    const malformed = await jwt.post(`${fx.base}/check`, {
      branch: "feature",
      check_name: "docs/lint",
      status: "passed",
      image_digest: "ab".repeat(32),
    });
    expect(errorOf(malformed)).toMatchObject({ code: "VALIDATION_FAILED" });
  });

  it("keeps one envelope per check and sequence: a later verdict of the job replaces it", async () => {
    await report(jwt, { check_name: "docs/lint", status: "failed" });
    const all = await attestations();
    expect(all.map((e) => statementOf(e).predicate.result)).toEqual(["FAILED"]);
    await report(jwt, { check_name: "docs/lint", status: "passed" });
  });

  it("answers an empty list before the job's sequence, and refuses an unknown branch", async () => {
    expect(await attestations(`branch=feature&at=${job.sequence - 1}`)).toEqual([]);
    const res = await fx.client.get(`${fx.base}/attestations?branch=nope`);
    expect(errorOf(res).code).toBe("BRANCH_NOT_FOUND");
  });
});

describe("verifying", () => {
  it("the Go DSSE reference implementation accepts the service's envelopes", async () => {
    const envelopes = await attestations();
    const go = await goVerifyEnvelopes(envelopes, vkey);
    expect(go.out).toMatch(new RegExp(`^verified ${fx.repo}@${job.sequence} [0-9a-f]{64} PASSED docs/lint$`));
    expect(go.ok).toBe(true);
  });

  it("both verifiers refuse an envelope re-signed with another key", async () => {
    const [envelope] = await attestations();
    if (!envelope) throw new Error("no attestation");
    const forged = resignedWithAnotherKey(envelope);
    expect(openEnvelope(forged, parseVerifierKey(vkey).publicKey)).toBeNull();
    const go = await goVerifyEnvelopes([forged], vkey);
    expect(go.ok).toBe(false);
    expect(go.out).toMatch(/^refused: envelope 0:/);
  });

  it("both verifiers refuse a changed payload under the service's signature", async () => {
    const [envelope] = await attestations();
    if (!envelope) throw new Error("no attestation");
    const changed = withChangedPayload(envelope, (s) => {
      s["predicate"]["result"] = "PASSED";
      s["predicate"]["check_name"] = "docs/other";
    });
    expect(openEnvelope(changed, parseVerifierKey(vkey).publicKey)).toBeNull();
    const go = await goVerifyEnvelopes([changed], vkey);
    expect(go.ok).toBe(false);
    expect(go.out).toMatch(/^refused: envelope 0:/);
  });
});

describe("quire verify --attestations", () => {
  const verifyAll = async () => {
    const token = await app.idp.token(fx.owner);
    const get = fetchLogGet(app.url, { authorization: `Bearer ${token}` });
    const store = new CheckpointStore(await mkdtemp(path.join(os.tmpdir(), "attest-cli-")));
    const audit = await auditRepo(get, store, app.url, fx.repo, new Date());
    if (!audit) throw new Error("no log to audit");
    return verifyAttestations(get, (await store.key(app.url)) ?? "", audit, ["main", "feature"]);
  };
  const replaceEnvelope = (envelope: DsseEnvelope) =>
    app.sql("UPDATE check_attestations SET envelope = $1 WHERE repo_id = $2", [
      JSON.stringify(envelope),
      fx.repoId,
    ]);

  it("proves each attestation's subject in the signed log", async () => {
    expect(await verifyAll()).toEqual([
      {
        branch: "feature",
        sequence: job.sequence,
        check_name: "docs/lint",
        result: "PASSED",
        job: job.id,
        proof_hashes: expect.any(Number),
      },
    ]);
  });

  it("refuses an envelope re-signed with another key, and a changed payload", async () => {
    const [envelope] = await attestations();
    if (!envelope) throw new Error("no attestation");
    try {
      await replaceEnvelope(resignedWithAnotherKey(envelope));
      await expect(verifyAll()).rejects.toThrow(/no valid signature by the log's key/);
      await replaceEnvelope(withChangedPayload(envelope, (s) => (s["predicate"]["job"]["id"] = "x")));
      await expect(verifyAll()).rejects.toThrow(/no valid signature by the log's key/);
    } finally {
      await replaceEnvelope(envelope);
    }
  });

  it("refuses a validly signed statement about a commit the log does not hold there", async () => {
    // Signed with the service's own key (read from the database, as an insider could): only the
    // inclusion proof can refuse it.
    const [envelope] = await attestations();
    if (!envelope) throw new Error("no attestation");
    const [row] = await app.sql<{ private_pem: string }>("SELECT private_pem FROM tlog_signing_keys");
    const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString());
    statement.subject[0].digest.sha256 = "ab".repeat(32);
    const payload = Buffer.from(JSON.stringify(statement));
    const sig = sign(null, pae(envelope.payloadType, payload), createPrivateKey(row?.private_pem ?? ""));
    const keyid = keyIdOf(parseVerifierKey(vkey).publicKey);
    try {
      await replaceEnvelope({
        payloadType: envelope.payloadType,
        payload: payload.toString("base64"),
        signatures: [{ keyid, sig: sig.toString("base64") }],
      });
      await expect(verifyAll()).rejects.toThrow(/is not in the signed log/);
    } finally {
      await replaceEnvelope(envelope);
    }
  });
});
