import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signJobToken } from "../../../shared/ci/identity/jwt.ts";
import {
  type JWK,
  localJobSigner,
  RETIRED_KEY_GRACE_MS,
  ROTATION_LOCK,
  rotateLocalJobKey,
} from "../../../shared/ci/identity/signer.ts";
import { ManualClock } from "../../../shared/clock.ts";
import { freshDatabase, startTestApp, type TestApp } from "../../support/app.ts";
import { useFixture } from "../../support/world.ts";
import { claims } from "./claims.ts";
import { type FakeKms, startFakeKms } from "./kms-fake.ts";

const ISSUER = "http://127.0.0.1:8931/oidc";

const app = useFixture(() => startTestApp({ SVC_OIDC_ISSUER_URL: `${ISSUER}/` }));
const second = useFixture(() => startTestApp({ DATABASE_URL: app.databaseUrl, SVC_OIDC_ISSUER_URL: ISSUER }));

const getJson = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
};

describe("discovery document", () => {
  it("names the issuer, the JWKS and RS256, with a cache lifetime", async () => {
    const res = await getJson(`${app.url}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    expect(res.body).toEqual({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      response_types_supported: ["id_token"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256"],
    });
  });

  it("defaults the issuer to the process's own address, which the server learns when it listens", async () => {
    const { jobIssuer } = await import("../../../shared/ci/urls.ts");
    const { loadConfig } = await import("../../../shared/config.ts");
    expect(jobIssuer({ config: loadConfig({}), selfUrl: "http://127.0.0.1:9090" })).toBe(
      "http://127.0.0.1:9090",
    );
    expect(app.server.ctx.selfUrl).toBe(app.url);
    const set = loadConfig({ SVC_OIDC_ISSUER_URL: "https://ci.example.com/" });
    expect(jobIssuer({ config: set, selfUrl: app.url })).toBe("https://ci.example.com");
    expect(() => loadConfig({ SVC_OIDC_ISSUER_URL: "http://example.com" })).toThrow(/SVC_OIDC_ISSUER_URL/);
    expect(() => loadConfig({ SVC_JOB_SIGNER: "kms" })).toThrow(/SVC_JOB_KMS_KEY_VERSION/);
  });
});

describe("JWKS of the local key", () => {
  it("publishes one RSA public key, nothing private, the same from every instance", async () => {
    const a = await getJson(`${app.url}/.well-known/jwks.json`);
    const b = await getJson(`${second.url}/.well-known/jwks.json`);
    expect(a.status).toBe(200);
    expect(a.headers.get("cache-control")).toBe("public, max-age=300");
    const keys = a.body["keys"] as JWK[];
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]!).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
    expect(keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", e: "AQAB" });
    expect(Buffer.from(keys[0]!.n, "base64url")).toHaveLength(256);
    expect(b.body).toEqual(a.body);
    expect(await app.sql("SELECT kid FROM job_signing_keys")).toEqual([{ kid: keys[0]!.kid }]);
  });

  it("signs tokens that jose verifies against the JWKS fetched over HTTP, from either instance", async () => {
    const jwks = createRemoteJWKSet(new URL(`${app.url}/.well-known/jwks.json`));
    for (const instance of [app, second]) {
      const token = await signJobToken(instance.server.ctx.jobSigner, claims({ iss: ISSUER }), new Date());
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer: ISSUER,
        audience: "docstore",
        algorithms: ["RS256"],
      });
      expect(protectedHeader.typ).toBe("JWT");
      expect(payload).toMatchObject({ ...claims({ iss: ISSUER }) });
      expect(payload.exp! - payload.iat!).toBe(3600);
    }
  });

  it("rejects a token whose signature was tampered with", async () => {
    const keys = (await getJson(`${app.url}/.well-known/jwks.json`)).body["keys"] as JWK[];
    const token = await signJobToken(app.server.ctx.jobSigner, claims(), new Date());
    const [h, , s] = token.split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims(), sub: "repo:evil" })).toString("base64url")}.${s}`;
    await expect(jwtVerify(forged, createLocalJWKSet({ keys }))).rejects.toThrow();
  });
});

/** Waits until some other session of the database waits on a lock. */
async function waitUntilBlocked(db: pg.Client): Promise<void> {
  for (;;) {
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    if (rows[0].n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("local key storage", () => {
  let pools: pg.Pool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    pools = [];
  });
  const pool = (url: string) => {
    const p = new pg.Pool({ connectionString: url, max: 2 });
    pools.push(p);
    return p;
  };

  it("concurrent first use on one database yields one active key", async () => {
    const url = await freshDatabase();
    const clock = new ManualClock();
    const signers = Array.from({ length: 4 }, () => localJobSigner(pool(url), clock));
    const kids = await Promise.all(signers.map((s) => s.keyId()));
    expect(new Set(kids).size).toBe(1);
    const rows = await pools[0]!.query("SELECT kid FROM job_signing_keys WHERE retired_at IS NULL");
    expect(rows.rows).toEqual([{ kid: kids[0] }]);
    const all = await pools[0]!.query("SELECT count(*)::int AS n FROM job_signing_keys");
    expect(all.rows[0].n).toBe(1);
  });

  it("a rotation waits for one in progress, then retires the key that one made", async () => {
    const url = await freshDatabase();
    const clock = new ManualClock();
    const p = pool(url);
    await localJobSigner(p, clock).keyId();
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      // Another instance's rotation, held open between retiring the old key and adding its own.
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock($1)", [ROTATION_LOCK.toString()]);
      await other.query("UPDATE job_signing_keys SET retired_at = $1 WHERE retired_at IS NULL", [
        clock.now(),
      ]);
      const rotated = rotateLocalJobKey(p, clock.now());
      await waitUntilBlocked(other);
      await other.query(
        `INSERT INTO job_signing_keys (kid, private_pem, public_jwk, created_at)
         SELECT 'other', private_pem, public_jwk, $1 FROM job_signing_keys LIMIT 1`,
        [clock.now()],
      );
      await other.query("COMMIT");
      const kid = await rotated;
      const active = await p.query("SELECT kid FROM job_signing_keys WHERE retired_at IS NULL");
      expect(active.rows).toEqual([{ kid }]);
      const all = await p.query("SELECT count(*)::int AS n FROM job_signing_keys");
      expect(all.rows[0].n).toBe(3);
    } finally {
      await other.end();
    }
  });

  it("keeps a retired key in the JWKS until retired_at + 1 h (+ cache time), then drops it", async () => {
    const url = await freshDatabase();
    const clock = new ManualClock(new Date("2026-01-01T00:00:00Z"));
    const p = pool(url);
    const signer = localJobSigner(p, clock);
    const oldKid = await signer.keyId();
    const oldToken = await signJobToken(signer, claims(), clock.now());
    const newKid = await rotateLocalJobKey(p, clock.now());
    expect(newKid).not.toBe(oldKid);

    // A fresh instance signs with the new key at once; the old key stays published.
    const fresh = localJobSigner(p, clock);
    expect(await fresh.keyId()).toBe(newKid);
    let kids = (await fresh.publicJwks()).map((k) => k.kid);
    expect(kids).toEqual([newKid, oldKid]);
    await jwtVerify(oldToken, createLocalJWKSet({ keys: await fresh.publicJwks() }), {
      currentDate: new Date(clock.now().getTime() + 59 * 60_000),
    });

    expect(RETIRED_KEY_GRACE_MS).toBeGreaterThanOrEqual(3600_000);
    clock.advance(RETIRED_KEY_GRACE_MS - 1000);
    kids = (await fresh.publicJwks()).map((k) => k.kid);
    expect(kids).toEqual([newKid, oldKid]);
    clock.advance(2000);
    kids = (await fresh.publicJwks()).map((k) => k.kid);
    expect(kids).toEqual([newKid]);
  });
});

describe("an app configured for Cloud KMS", () => {
  const V1 = "projects/p/locations/global/keyRings/ci/cryptoKeys/jobs/cryptoKeyVersions/1";
  const V2 = "projects/p/locations/global/keyRings/ci/cryptoKeys/jobs/cryptoKeyVersions/2";
  let kms: FakeKms;
  let kmsApp: TestApp;
  beforeAll(async () => {
    kms = await startFakeKms([V1, V2]);
    kmsApp = await startTestApp({
      SVC_JOB_SIGNER: "kms",
      SVC_JOB_KMS_KEY_VERSION: V2,
      SVC_JOB_KMS_PREVIOUS_KEY_VERSIONS: V1,
      SVC_JOB_KMS_ENDPOINT: kms.endpoint,
    });
  });
  afterAll(async () => {
    await kmsApp?.close();
    await kms?.close();
  });

  it("publishes both KMS versions and its tokens verify against the JWKS over HTTP", async () => {
    const res = await getJson(`${kmsApp.url}/.well-known/jwks.json`);
    expect((res.body["keys"] as JWK[]).length).toBe(2);
    const token = await signJobToken(kmsApp.server.ctx.jobSigner, claims(), new Date());
    const jwks = createRemoteJWKSet(new URL(`${kmsApp.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, { audience: "docstore" });
    expect(payload.job_id).toBe("job-1");
    expect(await kmsApp.sql("SELECT kid FROM job_signing_keys")).toEqual([]);
  });
});
