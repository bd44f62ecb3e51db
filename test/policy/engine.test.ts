import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPolicyEngine, type PolicyEngine } from "../../shared/policy/engine.ts";
import { freshDatabase } from "../support/app.ts";
import {
  CI_MUST_PASS,
  CONFLICT,
  input,
  NO_ALLOW,
  NO_REASON,
  OPEN_PROPOSAL,
  PARSE_ERROR,
  REQUIRE_REVIEW,
  SLOW,
  source,
  UNSAFE_VAR,
} from "./fixtures.ts";

let pool: pg.Pool;
let engine: PolicyEngine;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabase(), max: 4 });
  engine = createPolicyEngine();
});
afterAll(async () => {
  await engine.close();
  await pool.end();
});

const review = (reviewer: string, status: string, sequence = 7) => ({ reviewer, status, sequence });
const check = (check_name: string, status: string, sequence = 7) => ({ check_name, status, sequence });

describe("the policies the spec names, compiled by the real opa", () => {
  const requireReview = source("require_review", REQUIRE_REVIEW);
  const ciMustPass = source("ci_must_pass", CI_MUST_PASS);

  it("require_review passes with an approval at the head and none rejected", async () => {
    expect(await engine.evaluate(pool, [requireReview], input())).toEqual([
      { name: "require_review", pass: true, reason: "approved" },
    ]);
  });

  it("require_review fails without an approval, with one only at an older sequence, or with a rejection", async () => {
    const none = await engine.evaluate(pool, [requireReview], input({ reviews: [] }));
    expect(none).toEqual([
      { name: "require_review", pass: false, reason: "an approved review of the head is required" },
    ]);
    const stale = await engine.evaluate(
      pool,
      [requireReview],
      input({ reviews: [review("a@x", "approved", 6)] }),
    );
    expect(stale[0]!.pass).toBe(false);
    const rejected = await engine.evaluate(
      pool,
      [requireReview],
      input({ reviews: [review("a@x", "approved"), review("b@x", "rejected")] }),
    );
    expect(rejected).toEqual([{ name: "require_review", pass: false, reason: "rejected by b@x" }]);
  });

  it("ci_must_pass needs at least one check at the head, every one passed", async () => {
    expect(await engine.evaluate(pool, [ciMustPass], input())).toEqual([
      { name: "ci_must_pass", pass: true, reason: "all checks passed" },
    ]);
    const none = await engine.evaluate(pool, [ciMustPass], input({ check_runs: [] }));
    expect(none).toEqual([{ name: "ci_must_pass", pass: false, reason: "no check has run on the head" }]);
    const onlyOld = await engine.evaluate(
      pool,
      [ciMustPass],
      input({ check_runs: [check("ci/test", "passed", 6)] }),
    );
    expect(onlyOld[0]).toMatchObject({ pass: false, reason: "no check has run on the head" });
    const mixed = await engine.evaluate(
      pool,
      [ciMustPass],
      input({
        check_runs: [check("ci/test", "failed"), check("ci/lint", "passed"), check("ci/docs", "pending")],
      }),
    );
    expect(mixed).toEqual([
      { name: "ci_must_pass", pass: false, reason: "checks not passed: ci/docs, ci/test" },
    ]);
  });

  it("a policy on input.proposal sees null without a proposal and the proposal's fields with one", async () => {
    const open = source("open_proposal", OPEN_PROPOSAL);
    expect((await engine.evaluate(pool, [open], input()))[0]).toEqual({
      name: "open_proposal",
      pass: true,
      reason: "allowed",
    });
    const denied = {
      name: "open_proposal",
      pass: false,
      reason: "an open proposal with a title is required",
    };
    expect((await engine.evaluate(pool, [open], input({ proposal: null })))[0]).toEqual(denied);
    const untitled = { id: "p1", branch: "feature/x", base_branch: "main", title: "  ", state: "open" };
    expect((await engine.evaluate(pool, [open], input({ proposal: untitled })))[0]).toEqual(denied);
    const closed = { ...untitled, title: "Add a", state: "closed" };
    expect((await engine.evaluate(pool, [open], input({ proposal: closed })))[0]).toEqual(denied);
  });

  it("results come in the order of the sources, one per policy", async () => {
    const results = await engine.evaluate(
      pool,
      [ciMustPass, requireReview, source("open_proposal", OPEN_PROPOSAL)],
      input({ reviews: [] }),
    );
    expect(results.map((r) => [r.name, r.pass])).toEqual([
      ["ci_must_pass", true],
      ["require_review", false],
      ["open_proposal", true],
    ]);
  });

  it("no policies: no results", async () => {
    expect(await engine.evaluate(pool, [], input())).toEqual([]);
  });
});

describe("where a policy runs", () => {
  const requireReview = source("require_review", REQUIRE_REVIEW);
  const ciMustPass = source("ci_must_pass", CI_MUST_PASS);
  /** A policy that allows after tens of milliseconds of work: too slow for a 5 ms quick limit. */
  const medium = source(
    "medium",
    "package quire.policy.medium\n\nn := numbers.range(1, 600)\n\nallow if count([1 | some a in n; some b in n; a * b == -1]) == 0\n",
  );

  it("quick policies run on the main thread, and the worker thread never starts", async () => {
    // A generous quick limit, so that a busy machine cannot send them to the worker.
    const quick = createPolicyEngine({ quickLimitMs: 5_000 });
    try {
      for (let i = 0; i < 2; i++) {
        expect((await quick.evaluate(pool, [ciMustPass, requireReview], input())).map((r) => r.pass)).toEqual(
          [true, true],
        );
      }
      expect(quick.counts).toEqual({ quick: 4, interrupted: 0, worker: 0 });
    } finally {
      await quick.close();
    }
  });

  it("a policy past the quick limit goes to the worker with the same verdict, and is not tried on the main thread again", async () => {
    const strict = createPolicyEngine({ quickLimitMs: 5, timeoutMs: 20_000 });
    try {
      const allowed = (name: string, reason = "allowed") => ({ name, pass: true, reason });
      const batch = [medium, requireReview, ciMustPass];
      await strict.prepare(pool, batch);
      expect(await strict.evaluate(pool, batch, input())).toEqual([
        allowed("medium"),
        allowed("require_review", "approved"),
        allowed("ci_must_pass", "all checks passed"),
      ]);
      // Interrupted first thing: it and the policies after it went to the worker.
      expect(strict.counts).toEqual({ quick: 0, interrupted: 1, worker: 3 });
      expect(await strict.evaluate(pool, [medium], input())).toEqual([allowed("medium")]);
      expect(strict.counts).toEqual({ quick: 0, interrupted: 1, worker: 4 });
      // In the middle of a batch (a new version, so not known as slow): the verdicts are the same
      // whichever policies finished on the main thread (at a 5 ms limit, a busy machine may even
      // interrupt the batch before its first policy).
      const middle = [requireReview, source("medium", `${medium.source}\n`), ciMustPass];
      expect((await strict.evaluate(pool, middle, input())).map((r) => r.pass)).toEqual([true, true, true]);
    } finally {
      await strict.close();
    }
  });

  it("the main thread keeps running while a policy that loops is stopped on the worker", async () => {
    // The default limits: 10 ms on the main thread, then the worker's 250 ms stops it.
    const defaults = createPolicyEngine();
    try {
      await defaults.prepare(pool, [source("slow", SLOW)]);
      let last = performance.now();
      let longestGap = 0;
      const ticker = setInterval(() => {
        longestGap = Math.max(longestGap, performance.now() - last);
        last = performance.now();
      }, 1);
      const [r] = await defaults.evaluate(pool, [source("slow", SLOW)], input());
      clearInterval(ticker);
      expect(r!.reason).toBe("policy evaluation timed out after 250 ms");
      expect(defaults.counts).toEqual({ quick: 0, interrupted: 1, worker: 1 });
      // Held for the quick limit at most (plus a busy machine's scheduling), never the 250 ms.
      expect(longestGap).toBeLessThan(150);
    } finally {
      await defaults.close();
    }
  });
});

describe("reason", () => {
  it("defaults to 'allowed' or 'denied by <name>' when the policy does not define it", async () => {
    const p = source("feature_only", NO_REASON);
    expect(await engine.evaluate(pool, [p], input({ branch: "feature/x" }))).toEqual([
      { name: "feature_only", pass: true, reason: "allowed" },
    ]);
    expect(await engine.evaluate(pool, [p], input({ branch: "fix/y" }))).toEqual([
      { name: "feature_only", pass: false, reason: "denied by feature_only" },
    ]);
  });

  it("only a boolean true allows", async () => {
    const p = source("truthy", `package t\n\nallow := "yes"\n\nreason := 1\n`);
    expect(await engine.evaluate(pool, [p], input())).toEqual([
      { name: "truthy", pass: false, reason: "denied by truthy" },
    ]);
  });
});

describe("fail closed", () => {
  it("a policy in Rego v0 syntax fails with the parser's message", async () => {
    const [r] = await engine.evaluate(pool, [source("old", PARSE_ERROR)], input());
    expect(r).toEqual({
      name: "old",
      pass: false,
      reason:
        "policy failed to compile: policy.rego:3: rego_parse_error: `if` keyword is required before rule body",
    });
  });

  it("a policy the compiler rejects fails with the compiler's message", async () => {
    const [r] = await engine.evaluate(pool, [source("unsafe", UNSAFE_VAR)], input());
    expect(r!.pass).toBe(false);
    expect(r!.reason).toMatch(
      /^policy failed to compile: .*policy\.rego:5: rego_unsafe_var_error: var y is unsafe/,
    );
  });

  it("a policy without allow fails to compile", async () => {
    const [r] = await engine.evaluate(pool, [source("no_allow", NO_ALLOW)], input());
    expect(r).toEqual({
      name: "no_allow",
      pass: false,
      reason: "policy failed to compile: policy.rego: the policy does not define `allow`",
    });
  });

  it("a policy whose evaluation errors fails with the error", async () => {
    const [r] = await engine.evaluate(pool, [source("conflict", CONFLICT)], input());
    expect(r!.pass).toBe(false);
    expect(r!.reason).toMatch(/^policy evaluation failed: .*conflict/i);
  });

  it("a policy that runs too long is stopped at the limit, and the next evaluation runs on a fresh worker", async () => {
    // A 20 ms limit against a policy that needs hundreds of ms but stays well under the 128 MiB
    // memory cap (opa-wasm allocates as it iterates), so the clock, not memory, stops it.
    const hasty = createPolicyEngine({ timeoutMs: 20 });
    try {
      await hasty.prepare(pool, [source("slow", SLOW), source("require_review", REQUIRE_REVIEW)]);
      const results = await hasty.evaluate(
        pool,
        [source("slow", SLOW), source("require_review", REQUIRE_REVIEW)],
        input(),
      );
      expect(results).toEqual([
        { name: "slow", pass: false, reason: "policy evaluation timed out after 20 ms" },
        { name: "require_review", pass: true, reason: "approved" },
      ]);
      expect(await hasty.evaluate(pool, [source("require_review", REQUIRE_REVIEW)], input())).toEqual([
        { name: "require_review", pass: true, reason: "approved" },
      ]);
    } finally {
      await hasty.close();
    }
  });

  it("a policy that needs more than the memory limit fails with an evaluation error", async () => {
    // A generous time limit, so that it is the 128 MiB cap that stops it, not the clock.
    const patient = createPolicyEngine({ timeoutMs: 20_000 });
    try {
      const long = "x".repeat(100);
      const hog = source(
        "hog",
        `package hog\n\nallow if count(concat("", ["${long}" | some _ in numbers.range(1, 3000000)])) > 0\n`,
      );
      expect(await patient.evaluate(pool, [hog], input())).toEqual([
        { name: "hog", pass: false, reason: "policy evaluation failed: opa_malloc: failed" },
      ]);
    } finally {
      await patient.close();
    }
  });

  it("a bad policy does not affect the good ones beside it", async () => {
    const results = await engine.evaluate(
      pool,
      [source("old", PARSE_ERROR), source("ci_must_pass", CI_MUST_PASS), source("conflict", CONFLICT)],
      input(),
    );
    expect(results.map((r) => [r.name, r.pass])).toEqual([
      ["old", false],
      ["ci_must_pass", true],
      ["conflict", false],
    ]);
  });

  it("without the opa binary a new policy fails closed with a clear reason, and nothing is cached", async () => {
    const noOpa = createPolicyEngine({ opaPath: "/nonexistent/opa" });
    try {
      const p = source("fresh", `package fresh\n\nallow := true\n`);
      const [r] = await noOpa.evaluate(pool, [p], input());
      expect(r!.pass).toBe(false);
      expect(r!.reason).toMatch(/^policy failed to compile: the opa binary is not available on this server/);
      const rows = await pool.query("SELECT 1 FROM policy_modules WHERE source_sha256 = $1", [p.sha256]);
      expect(rows.rowCount).toBe(0);
      // A policy compiled before (by any instance) still evaluates without opa.
      expect(await noOpa.evaluate(pool, [source("ci_must_pass", CI_MUST_PASS)], input())).toEqual([
        { name: "ci_must_pass", pass: true, reason: "all checks passed" },
      ]);
    } finally {
      await noOpa.close();
    }
  });
});
