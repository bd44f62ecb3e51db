import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { createPolicyEngine, type PolicyInput, type PolicySource } from "../../shared/policy/engine.ts";
import { percentile } from "../load.ts";
import { progress } from "../log.ts";

/** The two policies the spec names, as docs/policies.md shows them: what a typical merge runs. */
const REQUIRE_REVIEW = `package quire.policy.require_review

default allow := false

at_head(status) := {r.reviewer | some r in input.reviews; r.sequence == input.head_sequence; r.status == status}

allow if {
  count(at_head("approved")) > 0
  count(at_head("rejected")) == 0
}

default reason := "an approved review of the head is required"

reason := "approved" if allow
`;

const CI_MUST_PASS = `package quire.policy.ci_must_pass

default allow := false

at_head := [c | some c in input.check_runs; c.sequence == input.head_sequence]

not_passed := sort({c.check_name | some c in at_head; c.status != "passed"})

allow if {
  count(at_head) > 0
  count(not_passed) == 0
}

default reason := "no check has run on the head"

reason := sprintf("checks not passed: %s", [concat(", ", not_passed)]) if count(not_passed) > 0
`;

/** A merge of 40 changed paths with two reviews and three checks at the head. */
const INPUT: PolicyInput = {
  actor: "maintainer@example.com",
  actor_roles: ["maintainer"],
  action: "merge",
  repo: "bench/policy",
  branch: "feature/bench",
  draft: false,
  changed_paths: Array.from({ length: 40 }, (_, i) => `docs/section-${i}/page.md`),
  reviews: [
    { reviewer: "a@example.com", status: "approved", sequence: 42 },
    { reviewer: "b@example.com", status: "approved", sequence: 41 },
  ],
  check_runs: ["lint", "test", "links"].map((n) => ({
    check_name: `ci/${n}`,
    status: "passed",
    sequence: 42,
  })),
  attestations: [],
  owners: { "": ["a@example.com"], "docs/": ["b@example.com"] },
  structure: {},
  head_sequence: 42,
  base_sequence: 30,
  proposal: { id: "p1", branch: "feature/bench", base_branch: "main", title: "Bench", state: "open" },
};

/** Latencies of one kind of evaluation, in milliseconds. */
export interface PolicyLatency {
  runs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface PolicyBenchResult {
  /** Both policies compiled and loaded in this instance: the cost a merge pays almost always. */
  warm: PolicyLatency;
  /** A new instance: modules read from `policy_modules`, instantiated, nothing compiled. */
  newInstance: PolicyLatency;
  /** New policy versions: both compiled by opa, stored, loaded and evaluated. */
  cold: PolicyLatency;
  /** Warm p99 under the 5 ms target (two policies per merge). */
  warmTargetMet: boolean;
}

export const WARM_TARGET_MS = 5;

function source(name: string, text: string): PolicySource {
  const bytes = Buffer.from(text);
  return { name, source: bytes, sha256: createHash("sha256").update(bytes).digest() };
}

/** A version of `text` no instance has compiled yet (a comment makes its hash new). */
const fresh = (name: string, text: string) =>
  source(name, `${text}\n# bench ${randomBytes(8).toString("hex")}\n`);

async function timed(runs: number, once: (i: number) => Promise<void>): Promise<PolicyLatency> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await once(i);
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { runs, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), maxMs: ms.at(-1) ?? 0 };
}

function expectAllPass(results: { name: string; pass: boolean; reason: string }[]): void {
  const failed = results.find((r) => !r.pass);
  if (failed) throw new Error(`policy ${failed.name} did not pass in the bench: ${failed.reason}`);
}

/**
 * Times `evaluate` for the two policies of a typical merge against Quire's database at
 * `databaseUrl`: warm (the common case), in a new instance (database cache hit), and cold
 * (compiling with the real opa). Standalone: bench/run.ts may call it as one phase. The rows it
 * adds to `policy_modules` are removed again.
 */
export async function measurePolicyEvaluation(
  databaseUrl: string,
  opts: { warmRuns?: number; coldRuns?: number } = {},
): Promise<PolicyBenchResult> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const created: Buffer[] = [];
  try {
    const engine = createPolicyEngine();
    try {
      const sources = [fresh("require_review", REQUIRE_REVIEW), fresh("ci_must_pass", CI_MUST_PASS)];
      created.push(...sources.map((s) => s.sha256));
      progress("policy: compiling the two policies once, then warm evaluations");
      await engine.prepare(pool, sources);
      for (let i = 0; i < 50; i++) await engine.evaluate(pool, sources, INPUT); // JIT and caches
      const warm = await timed(opts.warmRuns ?? 2000, async () =>
        expectAllPass(await engine.evaluate(pool, sources, INPUT)),
      );

      progress("policy: new instances (database cache hit, modules instantiated)");
      const newInstance = await timed(opts.coldRuns ?? 20, async () => {
        const other = createPolicyEngine();
        try {
          expectAllPass(await other.evaluate(pool, sources, INPUT));
        } finally {
          await other.close();
        }
      });

      progress("policy: cold evaluations (new versions compiled by opa)");
      const cold = await timed(opts.coldRuns ?? 20, async () => {
        const versions = [fresh("require_review", REQUIRE_REVIEW), fresh("ci_must_pass", CI_MUST_PASS)];
        created.push(...versions.map((s) => s.sha256));
        expectAllPass(await engine.evaluate(pool, versions, INPUT));
      });
      return { warm, newInstance, cold, warmTargetMet: warm.p99Ms < WARM_TARGET_MS };
    } finally {
      await engine.close();
    }
  } finally {
    await pool.query("DELETE FROM policy_modules WHERE source_sha256 = ANY($1::bytea[])", [created]);
    await pool.end();
  }
}
