import { createPublicKey, generateKeyPairSync, randomUUID } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from "jose";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { type JobTokenClaims, signJobToken } from "../../../shared/ci/identity/jwt.ts";
import { rotateLocalJobKey } from "../../../shared/ci/identity/signer.ts";
import { claimOldest } from "../../../shared/ci/jobs/queue.ts";
import type { JobRow } from "../../../shared/ci/jobs/records.ts";
import { newRequestToken } from "../../../shared/ci/jobs/request-token.ts";
import type { Res } from "../../support/client.ts";
import { commit, createBranch, errorOf, repoWithOwner, useFixture } from "../../support/world.ts";
import { claimedJob, mint, startJobTokenApp } from "./support.ts";

/**
 * Job tokens the repo API must refuse with 401, each next to a control that a genuine one works.
 * The probe is a read of the job's own repo, which a good token may do.
 */

const app = useFixture(startJobTokenApp);
const fx = useFixture(() => repoWithOwner(app));
beforeAll(async () => {
  await commit(fx, "main", { "docs/a.md": "# A\n" }, "first");
  await createBranch(fx, "feature");
});

/** Reads the job's repo with `token` as the bearer. */
const probe = (token: string): Promise<Res> => app.bearer(token).get(`${fx.base}/tree?branch=feature`);

async function expect401(token: string, message?: RegExp): Promise<void> {
  const res = await probe(token);
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.body).toEqual({ code: "UNAUTHENTICATED", error: expect.any(String) });
  if (message) expect(errorOf(res).error).toMatch(message);
}

async function expectAccepted(token: string): Promise<void> {
  const res = await probe(token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The claims of a genuine token, to re-sign or alter. */
const claimsOf = (token: string) =>
  decodeJwt(token) as unknown as JobTokenClaims & { iat: number; exp: number };

/** `token` with its payload replaced and its header and signature kept. */
function withPayload(token: string, payload: Record<string, unknown>): string {
  const [header, , signature] = token.split(".");
  return `${header}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${signature}`;
}

let job: JobRow;
let good: string;
beforeAll(async () => {
  job = await claimedJob(app, fx, "feature");
  good = await mint(app, job);
  await expectAccepted(good);
});

// First, so that no unknown-kid read of the keys (the flood below) happened in the last seconds.
describe("keys", () => {
  it("accepts the first token of a freshly rotated key at once, and tokens of the retired key still", async () => {
    const before = decodeProtectedHeader(good).kid;
    await rotateLocalJobKey(app.server.ctx.pool, app.clock.now());
    // An instance started after the rotation signs with the new key; this app's verifier has
    // the old key set cached and must read the keys again when it meets the new kid.
    const second = await startJobTokenApp({ DATABASE_URL: app.databaseUrl });
    try {
      const token = await signJobToken(
        second.server.ctx.jobSigner,
        claimsOf(await mint(app, job)),
        app.clock.now(),
      );
      expect(decodeProtectedHeader(token).kid).not.toBe(before);
      await expectAccepted(token);
      await expectAccepted(good);
    } finally {
      await second.close();
    }
  });
});

describe("signature and algorithm", () => {
  it("refuses a token signed by another RSA key under our kid", async () => {
    const { kid } = decodeProtectedHeader(good);
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const forged = await new SignJWT(claimsOf(good) as unknown as Record<string, unknown>)
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: kid! })
      .sign(privateKey);
    await expect401(forged, /signature verification failed/);
  });

  it("refuses alg: none", async () => {
    const unsigned = new UnsecuredJWT(claimsOf(good) as unknown as Record<string, unknown>).encode();
    await expect401(unsigned, /alg/);
  });

  it("refuses HS256 keyed with the public key (PEM and JWK bytes): the key-confusion attack", async () => {
    const { kid } = decodeProtectedHeader(good);
    const [jwk] = await app.server.ctx.jobSigner.publicJwks();
    const pem = createPublicKey({ key: { ...jwk! }, format: "jwk" }).export({ type: "spki", format: "pem" });
    for (const secret of [String(pem), JSON.stringify(jwk), jwk!.n]) {
      const confused = await new SignJWT(claimsOf(good) as unknown as Record<string, unknown>)
        .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: kid! })
        .sign(new TextEncoder().encode(secret));
      await expect401(confused, /alg/);
    }
  });

  it("refuses a payload changed after signing (job_id, sequence or branch)", async () => {
    const otherJob = await claimedJob(app, fx, "main");
    const claims = claimsOf(good);
    for (const change of [{ job_id: otherJob.id }, { sequence: claims.sequence + 1 }, { branch: "main" }]) {
      await expect401(withPayload(good, { ...claims, ...change }), /signature verification failed/);
    }
    await expectAccepted(good);
  });

  it("refuses a kid it does not know, reading the keys again at most once for a flood of them", async () => {
    const signer = app.server.ctx.jobSigner;
    const spy = vi.spyOn(signer, "publicJwks");
    try {
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      for (let i = 0; i < 5; i++) {
        const token = await new SignJWT(claimsOf(good) as unknown as Record<string, unknown>)
          .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: randomUUID() })
          .sign(privateKey);
        await expect401(token, /no applicable key/);
      }
      expect(spy.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("claims", () => {
  it("refuses an expired token (the context's clock has moved past exp)", async () => {
    const token = await mint(app, job);
    await expectAccepted(token);
    // Later tests mint and verify by the same clock, so it need not go back.
    app.clock.advanceSeconds(3601);
    await expect401(token, /"exp" claim timestamp check failed/);
    await expectAccepted(await mint(app, job)); // one minted now works
  });

  it("refuses another audience", async () => {
    await expect401(await mint(app, job, { audience: "docstore" }), /unexpected "aud" claim value/);
  });

  it("refuses another issuer, even signed with our key (it is then taken for an ID token)", async () => {
    const now = app.clock.now();
    const token = await signJobToken(
      app.server.ctx.jobSigner,
      { ...claimsOf(await mint(app, job)), iss: "https://evil.example" },
      now,
    );
    await expect401(token, /ID token/);
  });

  it("refuses a genuine signature whose jti Quire never recorded", async () => {
    const token = await signJobToken(
      app.server.ctx.jobSigner,
      { ...claimsOf(good), jti: randomUUID() },
      app.clock.now(),
    );
    await expect401(token, /no record of issuing it/);
  });

  it("refuses a genuine token whose issuance record was removed", async () => {
    const token = await mint(app, job);
    await expectAccepted(token);
    await app.sql("DELETE FROM ci_token_issuances WHERE jti = $1", [claimsOf(token).jti]);
    await expect401(token, /no record of issuing it/);
  });

  it("refuses a genuine signature over claims that differ from the issuance record", async () => {
    const token = await mint(app, job);
    const forged = await signJobToken(
      app.server.ctx.jobSigner,
      { ...claimsOf(token), sequence: claimsOf(token).sequence + 5 },
      app.clock.now(),
    );
    await expect401(forged, /differ from the record/);
  });

  it("refuses malformed claims with 401, not a server error", async () => {
    const claims = claimsOf(good);
    const cases: Record<string, unknown>[] = [
      { jti: "not-a-uuid" },
      { job_id: 42 },
      { sequence: "7" },
      { sequence: 1.5 },
      { repo: undefined },
      { branch: undefined },
    ];
    for (const change of cases) {
      const token = await signJobToken(
        app.server.ctx.jobSigner,
        { ...claims, ...change } as JobTokenClaims,
        app.clock.now(),
      );
      await expect401(token);
    }
  });
});

describe("the job's state", () => {
  it("stops working once the job completed", async () => {
    const done = await claimedJob(app, fx, "feature");
    const token = await mint(app, done);
    await expectAccepted(token);
    await app.sql(
      "UPDATE ci_jobs SET status = 'passed', request_token_sha256 = NULL, completed_at = now() WHERE id = $1",
      [done.id],
    );
    await expect401(token, /no longer running/);
  });

  it("stops working once the job went back to the queue, and stays refused when it is claimed again", async () => {
    const first = await claimedJob(app, fx, "feature");
    const old = await mint(app, first);
    await expectAccepted(old);
    await app.sql(
      `UPDATE ci_jobs SET status = 'queued', request_token_sha256 = NULL, claimed_at = NULL, claimed_by = NULL
       WHERE id = $1`,
      [first.id],
    );
    await expect401(old, /no longer running/);
    const again = await claimOldest(app.server.ctx.pool, {
      worker: "another-worker",
      tokenHash: newRequestToken().hash,
      now: app.clock.now(),
    });
    expect(again).toMatchObject({ id: first.id, attempt: 2, status: "claimed" });
    await expect401(old, /no longer running/);
    await expectAccepted(await mint(app, again!));
  });

  it("stops working once its repo is deleted", async () => {
    const gone = await repoWithOwner(app);
    await commit(gone, "main", { "a.md": "a" }, "first");
    const doomed = await claimedJob(app, gone, "main");
    const token = await mint(app, doomed);
    expect((await app.bearer(token).get(`${gone.base}/tree`)).status).toBe(200);
    const deleted = await gone.client.delete(`/repos/${gone.repo}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
    const res = await app.bearer(token).get(`${gone.base}/tree`);
    expect(res.status).toBe(401);
    expect(errorOf(res).error).toMatch(/no longer exists/);
  });
});
