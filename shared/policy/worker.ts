/**
 * The policy worker thread: evaluates compiled Rego (wasm) with @open-policy-agent/opa-wasm, for
 * the policies that ran past the main thread's quick limit (inline.ts). It runs apart from the
 * main thread so that a slow policy delays no request: the host terminates the whole worker on a
 * timeout and starts another. Node loads this file with its own type stripping, so it uses
 * erasable TypeScript only.
 */
import { parentPort } from "node:worker_threads";
import { describe, type PolicyCall, PolicyInstances, type Verdict } from "./instances.ts";

/** One evaluation request from the host. */
export interface Job extends PolicyCall {
  id: number;
  /** The input as JSON text, encoded once by the host for all of a merge's policies. */
  input: string;
}

/**
 * The worker's messages: `loaded` once the job's module is instantiated (the host starts the
 * evaluation clock then), and the verdict.
 */
export type Reply = { id: number; loaded: true } | ({ id: number } & Verdict);

const instances = new PolicyInstances();

async function handle(job: Job, onLoaded: () => void): Promise<Verdict> {
  try {
    const policy = await instances.load(job);
    onLoaded();
    return instances.evaluate(job, policy, new TextEncoder().encode(job.input).buffer as ArrayBuffer);
  } catch (err) {
    return { ok: false, error: describe(err) };
  }
}

const port = parentPort;
if (port) {
  port.on("message", (job: Job) => {
    const onLoaded = () => port.postMessage({ id: job.id, loaded: true } satisfies Reply);
    void handle(job, onLoaded).then((verdict) =>
      port.postMessage({ id: job.id, ...verdict } satisfies Reply),
    );
  });
  port.postMessage({ ready: true });
}
