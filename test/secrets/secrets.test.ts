import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { JobRow } from "../../shared/ci/jobs/records.ts";
import { secretsBlockedReason } from "../../shared/repo-secrets/reveal.ts";
import { eventsOf } from "../orgs/fixtures.ts";
import { api } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { client } from "../support/client.ts";
import { expectError, expectStatus, useFixture, world } from "../support/world.ts";

/**
 * Repo secrets over real HTTP (docs/secrets.md): who may set, list and delete them, what is
 * refused, that no answer, event or stored byte holds a value, and which CI jobs get one back.
 */

const app = useFixture(() => startTestApp());
const fx = useFixture(() =>
  world(app).repo({ people: { maintainer: "maintainer", writer: "writer", reader: "reader" } }),
);

const VALUE = `s3cr3t-${randomBytes(12).toString("hex")}`;
const secretsPath = "/repos/:repo*/-/secrets/:secret" as const;

const setSecret = (who: Parameters<typeof fx.as>[0], secret: string, body: unknown) =>
  api(fx.as(who)).put(secretsPath, { params: { repo: fx.repo, secret }, body: body as { value: string } });
const list = (who: Parameters<typeof fx.as>[0]) =>
  api(fx.as(who)).get("/repos/:repo*/-/secrets", { params: { repo: fx.repo } });

/** Every text column of the rows that could carry a value: events, outbox, idempotency, secrets. */
async function storedText(): Promise<string> {
  const rows = await app.sql<{ t: string }>(
    `SELECT string_agg(t, '\n') AS t FROM (
       SELECT data::text AS t FROM events
       UNION ALL SELECT s::text FROM repo_secrets s
       UNION ALL SELECT encode(ciphertext, 'escape') || encode(wrapped_key, 'escape') FROM repo_secrets
     ) x`,
  );
  return rows[0]?.t ?? "";
}

describe("repo secrets over the API", () => {
  it("an admin sets, replaces, lists and deletes; every other role is refused; nothing shows a value", async () => {
    const first = expectStatus(
      await setSecret(fx.owner, "DEPLOY_TOKEN", { value: VALUE, description: "pushes the site" }),
      200,
    );
    expect(first).toEqual({
      id: expect.any(String),
      name: "DEPLOY_TOKEN",
      description: "pushes the site",
      size_bytes: VALUE.length,
      set_by: fx.owner,
      set_at: expect.any(String),
      created_by: fx.owner,
      created_at: expect.any(String),
    });
    const replaced = expectStatus(await setSecret(fx.owner, "DEPLOY_TOKEN", { value: `${VALUE}-2` }), 200);
    expect(replaced).toMatchObject({ id: first.id, description: "", created_at: first.created_at });
    expect(replaced.size_bytes).toBe(VALUE.length + 2);

    for (const who of ["maintainer", "writer", "reader"] as const) {
      expectError(await setSecret(who, "DEPLOY_TOKEN", { value: "mine" }), 403, "FORBIDDEN");
      const del = await api(fx.as(who)).delete(secretsPath, {
        params: { repo: fx.repo, secret: "DEPLOY_TOKEN" },
      });
      expectError(del, 403, "FORBIDDEN");
    }
    expectError(await setSecret("stranger@example.com", "X", { value: "v" }), 404, "REPO_NOT_FOUND");

    // Readers see names and who set them, never a value.
    const listed = expectStatus(await list("reader"), 200);
    expect(listed.secrets.map((s) => [s.name, s.set_by])).toEqual([["DEPLOY_TOKEN", fx.owner]]);
    expect(JSON.stringify(listed)).not.toContain(VALUE);

    // The events say a secret was set (twice: created, then replaced), never what it is.
    const set = await eventsOf(app, "com.svc.secret.set", `/repos/${fx.repo}`);
    expect(set.map((e) => e.data)).toEqual([
      { repo: fx.repo, name: "DEPLOY_TOKEN", size_bytes: VALUE.length, created: true, set_by: fx.owner },
      { repo: fx.repo, name: "DEPLOY_TOKEN", size_bytes: VALUE.length + 2, created: false, set_by: fx.owner },
    ]);

    // At rest: sealed. No stored text or byte holds the value, in the row, its event or elsewhere.
    const [row] = await app.sql<{ ciphertext: Buffer; wrapped_key: Buffer; key_ref: string }>(
      "SELECT ciphertext, wrapped_key, key_ref FROM repo_secrets WHERE repo_id = $1",
      [fx.repoId],
    );
    expect(row?.key_ref).toBe("local:repo-secrets-kek");
    expect(row?.ciphertext.length).toBe(VALUE.length + 2);
    expect(row?.ciphertext.includes(Buffer.from(VALUE))).toBe(false);
    expect(await storedText()).not.toContain(VALUE);

    const deleted = await api(fx.client).delete(secretsPath, {
      params: { repo: fx.repo, secret: "DEPLOY_TOKEN" },
    });
    expectStatus(deleted, 204);
    const again = await api(fx.client).delete(secretsPath, {
      params: { repo: fx.repo, secret: "DEPLOY_TOKEN" },
    });
    expectError(again, 404, "SECRET_NOT_FOUND");
    expect((await eventsOf(app, "com.svc.secret.deleted", `/repos/${fx.repo}`)).map((e) => e.data)).toEqual([
      { repo: fx.repo, name: "DEPLOY_TOKEN", deleted_by: fx.owner },
    ]);
    expect(expectStatus(await list(fx.owner), 200).secrets).toEqual([]);
  });

  it("refuses a bad name, value or field with 400, echoing no value and changing nothing", async () => {
    const big = "x".repeat(64 * 1024 + 1);
    const cases: [string, unknown][] = [
      ["lower_case", { value: "v" }],
      ["1STARTS_WITH_DIGIT", { value: "v" }],
      ["HAS-DASH", { value: "v" }],
      ["OK_NAME", { value: "" }],
      ["OK_NAME", {}],
      ["OK_NAME", { value: 42 }],
      ["OK_NAME", { value: "v", secret: "extra field" }],
      ["OK_NAME", { value: big }],
      ["OK_NAME", { value: `${VALUE}-refused`, description: "d".repeat(501) }],
    ];
    for (const [name, body] of cases) {
      const res = await setSecret(fx.owner, name, body);
      expectError(res, 400, "VALIDATION_FAILED");
      expect(JSON.stringify(res.body)).not.toContain(VALUE);
      expect(JSON.stringify(res.body)).not.toContain("xxxxxxxx");
    }
    // Exactly 64 KiB is the most a value may have.
    expectStatus(await setSecret(fx.owner, "BIG", { value: big.slice(1) }), 200);
    expect(expectStatus(await list("reader"), 200).secrets.map((s) => s.name)).toEqual(["BIG"]);
    expect(await storedText()).not.toContain(`${VALUE}-refused`);
  });
});

describe("reveal: a job's secrets", () => {
  const ci = (names: string) =>
    `checks:\n  - name: deploy\n    image: busybox\n    steps: ["true"]\n    secrets: [${names}]\n  - name: other\n    image: busybox\n    steps: ["true"]\n`;

  it("gives a maintainer's manual run the secrets its check lists, and nothing else", async () => {
    expectStatus(await setSecret(fx.owner, "SITE_KEY", { value: VALUE }), 200);
    expectStatus(await setSecret(fx.owner, "UNLISTED", { value: "not for deploy" }), 200);
    await fx.commit("main", { ".svc/ci.yaml": ci("SITE_KEY, NOT_SET") });
    const reveal = (token: string, body: unknown) =>
      client(app.url, async () => token).post(`/repos/${fx.repo}/-/secrets/reveal`, body);

    const { job, requestToken } = await fx.job("main", {
      checks: ["deploy", "other"],
      createdBy: fx.people.maintainer,
    });
    const ok = await reveal(requestToken, { check_name: "deploy", names: ["SITE_KEY", "NOT_SET"] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toEqual({
      values: { SITE_KEY: Buffer.from(VALUE).toString("base64") },
      missing: ["NOT_SET"],
    });
    const accessed = await eventsOf(app, "com.svc.secret.accessed", `/repos/${fx.repo}`);
    expect(accessed.map((e) => e.data)).toEqual([
      {
        repo: fx.repo,
        name: "SITE_KEY",
        job_id: job.id,
        check_name: "deploy",
        branch: "main",
        sequence: job.sequence,
      },
    ]);

    for (const [body, message] of [
      [{ check_name: "deploy", names: ["UNLISTED"] }, /does not list UNLISTED/],
      [{ check_name: "other", names: ["SITE_KEY"] }, /does not list SITE_KEY/],
      [{ check_name: "nope", names: ["SITE_KEY"] }, /not one of this job's checks/],
    ] as const) {
      const res = await reveal(requestToken, body);
      expect(expectError(res, 403, "SECRETS_BLOCKED")).toMatch(message);
      expect(JSON.stringify(res.body)).not.toContain(VALUE);
    }
    expectError(
      await reveal(requestToken, { check_name: "deploy", names: ["bad name"] }),
      400,
      "VALIDATION_FAILED",
    );
    expectError(
      await reveal("not-a-token", { check_name: "deploy", names: ["SITE_KEY"] }),
      401,
      "UNAUTHENTICATED",
    );
    await client(app.url, async () => requestToken).post(`/jobs/${job.id}/complete`, { status: "passed" });
    // Once the job is over its token reveals nothing.
    expectError(
      await reveal(requestToken, { check_name: "deploy", names: ["SITE_KEY"] }),
      401,
      "UNAUTHENTICATED",
    );

    // A writer's manual run gets none.
    const writers = await fx.job("main", { checks: ["deploy"], createdBy: fx.people.writer });
    const refused = await reveal(writers.requestToken, { check_name: "deploy", names: ["SITE_KEY"] });
    expect(expectError(refused, 403, "SECRETS_BLOCKED")).toMatch(/not a maintainer/);
    await client(app.url, async () => writers.requestToken).post(`/jobs/${writers.job.id}/complete`, {
      status: "passed",
    });
    expect(await eventsOf(app, "com.svc.secret.accessed", `/repos/${fx.repo}`)).toHaveLength(1);
  });

  it("the rule by trigger: main pushes and schedules yes; other pushes and proposals no", async () => {
    const ctx = app.server.ctx;
    const base = { repo: fx.repo, created_by: "quire-ci" } as JobRow;
    const reason = (job: Partial<JobRow>) => secretsBlockedReason(ctx, { ...base, ...job });
    expect(await reason({ trigger_type: "push", branch: "main" })).toBeNull();
    expect(await reason({ trigger_type: "schedule", branch: "main" })).toBeNull();
    expect(await reason({ trigger_type: "push", branch: "feature" })).toMatch(
      /push to 'feature' gets no secrets/,
    );
    expect(await reason({ trigger_type: "proposal", branch: "feature" })).toMatch(/proposal run gets no/);
    expect(await reason({ trigger_type: "proposal_synchronized", branch: "main" })).toMatch(
      /gets no secrets/,
    );
    expect(await reason({ trigger_type: "manual", branch: "feature", created_by: fx.owner })).toBeNull();
    expect(await reason({ trigger_type: "manual", branch: "feature", created_by: fx.people.reader })).toMatch(
      /not a maintainer/,
    );
  });
});
