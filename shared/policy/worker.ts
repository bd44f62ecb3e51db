/**
 * The policy worker thread: evaluates compiled Rego (wasm) with @open-policy-agent/opa-wasm.
 * It runs apart from the main thread so that a policy that loops can be stopped: the host
 * terminates the whole worker on a timeout (wasm cannot be interrupted from inside) and starts
 * another. Node loads this file with its own type stripping, so it uses erasable TypeScript only
 * and imports nothing of Quire's but the LRU.
 */
import { parentPort } from "node:worker_threads";
import { type LoadedPolicy, loadPolicy } from "@open-policy-agent/opa-wasm";
import { Lru } from "./lru.ts";
import type { WasmModule } from "./modules.ts";

/** One evaluation request from the host. */
export interface Job {
  id: number;
  /** The source's SHA-256 in hex: the key of the loaded instance in this worker. */
  key: string;
  module: WasmModule;
  allow: string;
  reason: string | null;
  /** The input as JSON text, encoded once by the host for all of a merge's policies. */
  input: string;
}

/**
 * The worker's messages: `loaded` once the job's module is instantiated (the host starts the
 * evaluation clock then), and the answer: the raw values of `allow` and `reason` (undefined when
 * not defined).
 */
export type Reply =
  | { id: number; loaded: true }
  | { id: number; ok: true; allow: unknown; reason: unknown }
  | { id: number; ok: false; error: string };

// 5 pages (320 KiB) to start, as opa-wasm does; at most 2048 pages (128 MiB), so a policy that
// builds huge values fails (closed) instead of exhausting the process.
const MEMORY = { initial: 5, maximum: 2048 };
// wasm memory never shrinks: an instance that grew past this is dropped after use, not kept.
const KEEP_BELOW_BYTES = 16 * 1024 * 1024;
const loaded = new Lru<string, LoadedPolicy>(64);

/** The single value of an entrypoint's result set, or undefined when the rule is undefined. */
function value(policy: LoadedPolicy, input: ArrayBuffer, entrypoint: string): unknown {
  const set = policy.evaluate(input, entrypoint) as { result: unknown }[] | undefined;
  return set?.[0]?.result;
}

async function handle(job: Job, onLoaded: () => void): Promise<Reply> {
  try {
    let policy = loaded.get(job.key);
    if (!policy) {
      policy = await loadPolicy(job.module, MEMORY);
      loaded.set(job.key, policy);
    }
    onLoaded();
    // opa-wasm takes an ArrayBuffer as JSON text that is already encoded: one encoding, two calls.
    const input = new TextEncoder().encode(job.input).buffer as ArrayBuffer;
    const allow = value(policy, input, job.allow);
    const reason = job.reason ? value(policy, input, job.reason) : undefined;
    if (policy.mem.buffer.byteLength > KEEP_BELOW_BYTES) loaded.delete(job.key);
    return { id: job.id, ok: true, allow, reason };
  } catch (err) {
    // After a trap the instance's heap may be inconsistent: load it afresh next time.
    loaded.delete(job.key);
    return { id: job.id, ok: false, error: describe(err) };
  }
}

/** opa-wasm throws strings and plain objects as well as Errors. */
function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "object" && err !== null && "message" in err) return String(err.message);
  return String(err);
}

const port = parentPort;
if (port) {
  port.on("message", (job: Job) => {
    const onLoaded = () => port.postMessage({ id: job.id, loaded: true } satisfies Reply);
    void handle(job, onLoaded).then((reply) => port.postMessage(reply));
  });
  port.postMessage({ ready: true });
}
