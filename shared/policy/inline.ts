import vm from "node:vm";
import type { RunOutcome } from "./evaluate.ts";
import { describe, type PolicyCall, PolicyInstances } from "./instances.ts";
import { Lru } from "./lru.ts";

/**
 * The quick lane: policies evaluated on the main thread, a merge's policies together under one
 * short time limit (default 10 ms, where a typical policy takes a fraction of a millisecond).
 * The limit is a `vm` script timeout, whose watchdog interrupts wasm as well as JavaScript. A
 * policy that runs past it is remembered as slow, and it and the rest of the batch go to the
 * worker thread (evaluate.ts), which has the full limit; a slow policy is never tried here again.
 * So the main thread is held at most the quick limit once per slow policy version, and an
 * instance whose policies are all quick never starts the worker thread and its ~19 MiB.
 */
export class InlineLane {
  readonly #limitMs: number;
  readonly #instances = new PolicyInstances();
  /** Keys of the policies that ran past the quick limit. */
  readonly #slow = new Lru<string, true>(1024);
  /** Made on first use: an instance that never evaluates a policy pays nothing for it. */
  #vm: ReturnType<typeof quickVm> | undefined;
  /** Evaluations finished here, and interrupted at the limit. */
  readonly counts = { quick: 0, interrupted: 0 };

  constructor(opts: { limitMs: number }) {
    this.#limitMs = opts.limitMs;
  }

  /**
   * Evaluates the calls in order, all against one input (JSON text). Returns an outcome per
   * call, undefined where the call is absent or must go to the worker: a slow policy, the one
   * that ran past the limit, and those after it.
   */
  async run(calls: readonly (PolicyCall | undefined)[], input: string): Promise<(RunOutcome | undefined)[]> {
    const quick = calls.map((c) => (c && !this.#slow.get(c.key) ? c : undefined));
    const outcomes: (RunOutcome | undefined)[] = calls.map(() => undefined);
    if (!quick.some(Boolean)) return outcomes;
    const loaded = await Promise.all(quick.map((c) => (c ? this.#load(c) : undefined)));
    const bytes = new TextEncoder().encode(input).buffer as ArrayBuffer;
    let current = -1;
    this.#vm ??= quickVm();
    const { context, script } = this.#vm;
    context.run = () => {
      for (current = 0; current < quick.length; current++) {
        const call = quick[current];
        const policy = loaded[current];
        if (!call || !policy) continue;
        outcomes[current] = "error" in policy ? policy : this.#instances.evaluate(call, policy, bytes);
        this.counts.quick++;
      }
    };
    try {
      script.runInContext(context, { timeout: this.#limitMs });
    } catch (err) {
      if ((err as { code?: string }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw err;
      const call = quick[current];
      if (call) {
        this.counts.interrupted++;
        this.#slow.set(call.key, true);
        this.#instances.forget(call.key); // interrupted mid-evaluation: its heap is not to be trusted
      }
      outcomes.fill(undefined, Math.max(current, 0));
    } finally {
      context.run = () => {};
    }
    return outcomes;
  }

  async #load(call: PolicyCall) {
    try {
      return await this.#instances.load(call);
    } catch (err) {
      return { ok: false as const, error: describe(err) };
    }
  }
}

/** A context of its own whose one script calls `run`: the `vm` timeout needs a script to time. */
function quickVm() {
  const context = { run: (): void => {} };
  vm.createContext(context); // contextifies the object itself: setting `run` sets the global
  return { context, script: new vm.Script("run()") };
}
