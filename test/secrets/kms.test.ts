import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openSecrets } from "../../shared/repo-secrets/secrets.ts";
import { startFakeKms } from "../ci/identity/kms-fake.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { expectStatus, useFixture, world } from "../support/world.ts";

/**
 * Deployed form of the envelope (docs/secrets.md): data keys wrapped by Cloud KMS, here the
 * gRPC fake speaking KMS's own protos. The database then holds nothing a value can be opened with.
 */

const KEY = "projects/p/locations/europe-west1/keyRings/quire/cryptoKeys/repo-secrets";
const kms = useFixture(async () => startFakeKms([]));
const app = useFixture(() =>
  startTestApp({ SVC_SECRETS_KMS_KEY: KEY, SVC_SECRETS_KMS_ENDPOINT: kms.endpoint }),
);
const fx = useFixture(() => world(app).repo());

describe("repo secrets sealed with Cloud KMS", () => {
  it("wraps each data key with the configured CryptoKey and unwraps it to open the value", async () => {
    const value = `kms-${randomBytes(16).toString("hex")}`;
    const put = (secret: string) =>
      api(fx.client).put("/repos/:repo*/-/secrets/:secret", {
        params: { repo: fx.repo, secret },
        body: { value },
      });
    expectStatus(await put("A_TOKEN"), 200);
    expectStatus(await put("B_TOKEN"), 200);
    expect(kms.cryptoCalls).toEqual([
      { method: "Encrypt", name: KEY },
      { method: "Encrypt", name: KEY },
    ]);
    const rows = await app.sql<{ name: string; key_ref: string; wrapped_key: Buffer; ciphertext: Buffer }>(
      "SELECT name, key_ref, wrapped_key, ciphertext FROM repo_secrets WHERE repo_id = $1 ORDER BY name",
      [fx.repoId],
    );
    expect(rows.map((r) => r.key_ref)).toEqual([KEY, KEY]);
    // Two secrets of one value: two data keys, so two different ciphertexts.
    expect(rows[0]?.ciphertext.equals(rows[1]?.ciphertext ?? Buffer.alloc(0))).toBe(false);
    for (const row of rows) expect(row.ciphertext.includes(Buffer.from(value))).toBe(false);

    const opened = await openSecrets(app.server.ctx, app.server.ctx.pool, fx.repoId, ["A_TOKEN", "NONE"]);
    expect([...opened].map(([name, v]) => [name, v.toString()])).toEqual([["A_TOKEN", value]]);
    expect(kms.cryptoCalls.at(-1)).toEqual({ method: "Decrypt", name: KEY });

    // A sealed value moved to another name does not open: the name is bound to its ciphertext.
    await app.sql(
      `UPDATE repo_secrets SET ciphertext = a.ciphertext, nonce = a.nonce, tag = a.tag, wrapped_key = a.wrapped_key
       FROM repo_secrets a WHERE a.repo_id = $1 AND a.name = 'A_TOKEN' AND repo_secrets.repo_id = $1
       AND repo_secrets.name = 'B_TOKEN'`,
      [fx.repoId],
    );
    await expect(openSecrets(app.server.ctx, app.server.ctx.pool, fx.repoId, ["B_TOKEN"])).rejects.toThrow();
  });
});
