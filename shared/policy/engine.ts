import type { VerifiedAttestation } from "../attestations/verified.ts";
import type { Queryable } from "../db/pool.ts";
import type { DocumentDiff } from "../documents/changes.ts";
import type { Logger } from "../log.ts";
import { type CompileFn, opaCompiler } from "./compile.ts";
import { PolicyRunner, policyResult } from "./evaluate.ts";
import { InlineLane } from "./inline.ts";
import type { PolicyCall } from "./instances.ts";
import { ModuleCache, type WasmModule } from "./modules.ts";

/** The `input` document every merge policy is evaluated against (see docs/policies.md). */
export interface PolicyInput {
  actor: string;
  actor_roles: string[];
  action: "merge";
  repo: string;
  branch: string;
  draft: boolean;
  changed_paths: string[];
  reviews: { reviewer: string; status: string; sequence: number }[];
  check_runs: { check_name: string; status: string; sequence: number }[];
  /** Changed JSON and YAML file → its changed places (docs/policies.md, "the input"). */
  structure: Record<string, DocumentDiff>;
  /** The head's check verdicts signed by CI jobs, verified by the server against the log's key (docs/verifiable-history.md). */
  attestations: VerifiedAttestation[];
  /** Folder prefix (`""`, `docs/`) → owner emails, for the OWNERS files above the changed paths (docs/owners.md). */
  owners: Record<string, string[]>;
  head_sequence: number;
  base_sequence: number;
  proposal: null | { id: string; branch: string; base_branch: string; title: string; state: string };
}

/** One policy's verdict, as the branch status and merge endpoints report it. */
export interface PolicyResult {
  name: string;
  pass: boolean;
  reason: string;
}

/** One policy file: its name (the file name without `.rego`), its bytes and their SHA-256. */
export interface PolicySource {
  name: string;
  source: Buffer;
  /** SHA-256 of `source`: the compile cache key (the file's content address, its version_id). */
  sha256: Buffer;
}

/** Compiles Rego with the real opa and evaluates it with opa-wasm; fails closed on every error. */
export interface PolicyEngine {
  /** Compiles what is not compiled yet (shared cache). Call OUTSIDE transactions: compiling takes time and must not hold row locks. */
  prepare(db: Queryable, sources: PolicySource[]): Promise<void>;
  /** Results in the order of `sources`; compiles on a cache miss; never throws for a bad policy. */
  evaluate(db: Queryable, sources: PolicySource[], input: PolicyInput): Promise<PolicyResult[]>;
  /** Where evaluations ran: finished on the main thread, interrupted there, sent to the worker. */
  readonly counts: Readonly<LaneCounts>;
  close(): Promise<void>;
}

/** Evaluations by where they ran (see `PolicyEngine.counts`). */
export interface LaneCounts {
  quick: number;
  interrupted: number;
  worker: number;
}

/** Options of `createPolicyEngine`; the defaults are what the service runs with. */
export interface PolicyEngineOptions {
  /** The opa binary; default the pinned one in `.tools/bin/opa` (emulators/README.md). */
  opaPath?: string;
  /** Replaces the opa compiler, for tests that count or break compilations. */
  compile?: CompileFn;
  /** Time limit of one policy's evaluation, default 250 ms. */
  timeoutMs?: number;
  /** Time limit of a merge's policies together on the main thread before they go to the worker, default 10 ms. */
  quickLimitMs?: number;
  log?: Logger;
}

/** What evaluating a compiled policy needs. */
function callOf(
  s: PolicySource,
  m: { module: WasmModule; allow: string; reason: string | null },
): PolicyCall {
  return { key: s.sha256.toString("hex"), module: m.module, allow: m.allow, reason: m.reason };
}

/** The time limit of one policy's evaluation unless configured otherwise. */
export const DEFAULT_TIMEOUT_MS = 250;
/** The main thread's limit for a merge's policies together (inline.ts). */
const DEFAULT_QUICK_LIMIT_MS = 10;

/**
 * The policy engine: a shared compile cache (table `policy_modules` behind an in-process LRU),
 * a quick lane on the main thread (inline.ts) and, for the policies too slow for it, one worker
 * thread that evaluates with the full time limit. The worker starts when a policy first needs
 * it, so an instance whose policies are all quick never starts one.
 */
export function createPolicyEngine(opts: PolicyEngineOptions = {}): PolicyEngine {
  const cache = new ModuleCache({
    compile: opts.compile ?? opaCompiler(opts.opaPath === undefined ? {} : { opaPath: opts.opaPath }),
    log: opts.log,
  });
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const runner = new PolicyRunner({ timeoutMs });
  const lane = new InlineLane({ limitMs: Math.min(opts.quickLimitMs ?? DEFAULT_QUICK_LIMIT_MS, timeoutMs) });
  let toWorker = 0;
  // `prepare` gets the pool and compiles in parallel; `evaluate` may get a transaction's client,
  // which runs one query at a time, so it asks for the modules one after another.
  /** Each source with its compiled module, in order. */
  const modulesOf = async (db: Queryable, sources: PolicySource[]) => {
    const modules = [];
    for (const s of sources) modules.push({ s, m: await cache.get(db, s.sha256, s.source) });
    return modules;
  };

  return {
    async prepare(db, sources) {
      if (sources.length === 0) return;
      await Promise.all(sources.map((s) => cache.get(db, s.sha256, s.source)));
    },

    async evaluate(db, sources, input) {
      if (sources.length === 0) return [];
      const modules = await modulesOf(db, sources);
      // One JSON encoding for all of a merge's policies, handed to opa-wasm as is.
      const json = JSON.stringify(input);
      const quick = await lane.run(
        modules.map(({ s, m }) => (m.ok ? callOf(s, m) : undefined)),
        json,
      );
      // What the quick lane left, queued together on the worker, each under its own time limit.
      return Promise.all(
        modules.map(async ({ s, m }, i) => {
          if (!m.ok) return policyResult(s.name, { ok: false, compileError: m.error });
          const done = quick[i];
          if (done) return policyResult(s.name, done);
          toWorker++;
          return policyResult(s.name, await runner.run({ ...callOf(s, m), input: json }));
        }),
      );
    },

    get counts() {
      return { ...lane.counts, worker: toWorker };
    },

    close: () => runner.close(),
  };
}
