import { Worker } from "node:worker_threads";
import { siblingModule } from "../modules.ts";
import type { PolicyResult } from "./engine.ts";
import type { Job, Reply } from "./worker.ts";

/** What evaluating one policy came to; `timedOut` when the worker had to be stopped. */
export type RunOutcome =
  | { ok: true; allow: unknown; reason: unknown }
  | { ok: false; error: string; timedOut?: boolean };

interface Pending {
  job: Omit<Job, "id">;
  resolve: (outcome: RunOutcome) => void;
}

const WORKER_URL = siblingModule(import.meta.url, "worker");

/**
 * Runs policies in one worker thread, one at a time, each under a time limit: the policies too
 * slow for the main thread's quick lane (inline.ts), which would hold every request for as long
 * as they run. A policy that runs past the limit is stopped by terminating the worker; a fresh one
 * is started for the next job (its loaded instances are lost, the compiled modules are not: the
 * host keeps them). The limit starts when the worker reports the job's module loaded, so starting
 * a worker or instantiating a module (tens of ms on a cold worker, more on a busy machine) never
 * counts against a policy; loading has its own, generous limit. Jobs never reject: every failure
 * is an outcome.
 *
 * One worker, not a pool: the policies that reach it are rare, and queueing costs less than a
 * second thread would on a two-core instance.
 */
/** How long instantiating one compiled module may take before the job fails (closed). */
const LOAD_TIMEOUT_MS = 10_000;

export class PolicyRunner {
  readonly #timeoutMs: number;
  readonly #queue: Pending[] = [];
  #worker: Worker | null = null;
  #ready: Promise<Worker> | null = null;
  #busy = false;
  #closed = false;
  #nextId = 1;
  #settle: ((outcome: RunOutcome) => void) | null = null;
  #loaded: (() => void) | null = null;

  constructor(opts: { timeoutMs: number }) {
    this.#timeoutMs = opts.timeoutMs;
  }

  /** Evaluates `job` on the worker; resolves with the outcome, never rejects. */
  run(job: Omit<Job, "id">): Promise<RunOutcome> {
    if (this.#closed) return Promise.resolve({ ok: false, error: "the policy engine is closed" });
    return new Promise((resolve) => {
      this.#queue.push({ job, resolve });
      void this.#pump();
    });
  }

  /** Terminates the worker; queued jobs resolve as failed. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const p of this.#queue.splice(0)) p.resolve({ ok: false, error: "the policy engine is closed" });
    this.#settle?.({ ok: false, error: "the policy engine is closed" });
    const worker = this.#worker;
    this.#worker = null;
    this.#ready = null;
    await worker?.terminate();
  }

  async #pump(): Promise<void> {
    if (this.#busy || this.#closed) return;
    const next = this.#queue.shift();
    if (!next) return;
    this.#busy = true;
    const outcome = await this.#runOne(next.job);
    next.resolve(outcome);
    this.#busy = false;
    if (this.#queue.length === 0) this.#worker?.unref();
    void this.#pump();
  }

  async #runOne(job: Omit<Job, "id">): Promise<RunOutcome> {
    let worker: Worker;
    try {
      worker = await this.#start();
    } catch (err) {
      return { ok: false, error: `the policy worker did not start: ${(err as Error).message}` };
    }
    // While a job is in flight the worker keeps the process alive, so a caller awaiting the
    // answer is never abandoned by an event loop with nothing else to do.
    worker.ref();
    return new Promise<RunOutcome>((resolve) => {
      const expire = (ms: number, what: string) =>
        setTimeout(() => {
          settle({ ok: false, error: `${what} after ${ms} ms`, timedOut: true });
          this.#discard(worker);
        }, ms);
      let timer = expire(LOAD_TIMEOUT_MS, "timed out loading the module");
      this.#loaded = () => {
        clearTimeout(timer);
        timer = expire(this.#timeoutMs, "timed out");
      };
      const settle = (outcome: RunOutcome) => {
        if (this.#settle !== settle) return;
        this.#settle = null;
        this.#loaded = null;
        clearTimeout(timer);
        resolve(outcome);
      };
      this.#settle = settle;
      worker.postMessage({ ...job, id: this.#nextId++ } satisfies Job);
    });
  }

  /** The ready worker, starting one if there is none. */
  #start(): Promise<Worker> {
    this.#ready ??= new Promise<Worker>((resolve, reject) => {
      const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: 256 } });
      this.#worker = worker;
      worker.on("message", (msg: Reply | { ready: true }) => {
        if ("ready" in msg) return resolve(worker);
        if (this.#worker !== worker) return;
        if ("loaded" in msg) return this.#loaded?.();
        this.#settle?.(msg.ok ? { ok: true, allow: msg.allow, reason: msg.reason } : msg);
      });
      const died = (why: string) => {
        reject(new Error(why));
        if (this.#worker !== worker) return;
        this.#settle?.({ ok: false, error: `the policy worker stopped: ${why}` });
        this.#discard(worker);
      };
      worker.on("error", (err) => died(err.message));
      worker.on("exit", (code) => died(`exit code ${code}`));
    });
    const ready = this.#ready;
    // A worker that failed to start is forgotten, so the next job tries a new one.
    ready.catch(() => {
      if (this.#ready === ready) this.#ready = null;
    });
    return ready;
  }

  /** Drops `worker` (timed out or dead); the next job starts a new one. */
  #discard(worker: Worker): void {
    if (this.#worker === worker) {
      this.#worker = null;
      this.#ready = null;
    }
    void worker.terminate();
  }
}

/** The reported result of one policy; fails closed on every kind of failure. */
export function policyResult(
  name: string,
  outcome: RunOutcome | { ok: false; compileError: string },
): PolicyResult {
  if ("compileError" in outcome) {
    return { name, pass: false, reason: `policy failed to compile: ${outcome.compileError}` };
  }
  if (!outcome.ok) {
    const reason = outcome.timedOut
      ? `policy evaluation ${outcome.error}`
      : `policy evaluation failed: ${outcome.error}`;
    return { name, pass: false, reason };
  }
  // Only the boolean true allows: a policy whose `allow` is undefined, "yes" or 1 denies.
  const pass = outcome.allow === true;
  const reason =
    typeof outcome.reason === "string" && outcome.reason !== ""
      ? outcome.reason
      : pass
        ? "allowed"
        : `denied by ${name}`;
  return { name, pass, reason };
}
