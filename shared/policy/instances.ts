/**
 * Instantiated policies and one evaluation of them, shared by the two places policies run: the
 * main thread's quick lane (inline.ts) and the worker thread (worker.ts). Written with erasable
 * TypeScript only, importing nothing of Quire's but the LRU: the worker loads it with Node's own
 * type stripping.
 */
import type { LoadedPolicy } from "@open-policy-agent/opa-wasm";
import { Lru } from "./lru.ts";
import type { WasmModule } from "./modules.ts";

/** One policy to evaluate: its compiled module and the entrypoints of `allow` and `reason`. */
export interface PolicyCall {
  /** The source's SHA-256 in hex: the key of the loaded instance. */
  key: string;
  module: WasmModule;
  allow: string;
  reason: string | null;
}

/** The raw values of `allow` and `reason` (undefined when not defined), or what went wrong. */
export type Verdict = { ok: true; allow: unknown; reason: unknown } | { ok: false; error: string };

// 5 pages (320 KiB) to start, as opa-wasm does; at most 2048 pages (128 MiB), so a policy that
// builds huge values fails (closed) instead of exhausting the process.
const MEMORY = { initial: 5, maximum: 2048 };
// wasm memory never shrinks: an instance that grew past this is dropped after use, not kept.
const KEEP_BELOW_BYTES = 16 * 1024 * 1024;

/** The 64 most recently used instances, by key. */
export class PolicyInstances {
  readonly #loaded = new Lru<string, LoadedPolicy>(64);

  /** The call's instance, instantiating its module on a miss. */
  async load(call: PolicyCall): Promise<LoadedPolicy> {
    let policy = this.#loaded.get(call.key);
    if (!policy) {
      // Imported on first use: an instance that never evaluates a policy never loads opa-wasm
      // and its dependencies (about 5 MiB of the main thread's memory).
      const { loadPolicy } = await import("@open-policy-agent/opa-wasm");
      policy = await loadPolicy(call.module, MEMORY);
      this.#loaded.set(call.key, policy);
    }
    return policy;
  }

  /** Evaluates `allow` and `reason` against `input`, JSON text already encoded (opa-wasm copies it in as is). */
  evaluate(call: PolicyCall, policy: LoadedPolicy, input: ArrayBuffer): Verdict {
    try {
      const allow = value(policy, input, call.allow);
      const reason = call.reason ? value(policy, input, call.reason) : undefined;
      if (policy.mem.buffer.byteLength > KEEP_BELOW_BYTES) this.forget(call.key);
      return { ok: true, allow, reason };
    } catch (err) {
      // After a trap the instance's heap may be inconsistent: load it afresh next time.
      this.forget(call.key);
      return { ok: false, error: describe(err) };
    }
  }

  /** Drops an instance whose state cannot be trusted (a trap, an interrupted evaluation). */
  forget(key: string): void {
    this.#loaded.delete(key);
  }
}

/** The single value of an entrypoint's result set, or undefined when the rule is undefined. */
function value(policy: LoadedPolicy, input: ArrayBuffer, entrypoint: string): unknown {
  const set = policy.evaluate(input, entrypoint) as { result: unknown }[] | undefined;
  return set?.[0]?.result;
}

/** opa-wasm throws strings and plain objects as well as Errors. */
export function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "object" && err !== null && "message" in err) return String(err.message);
  return String(err);
}
