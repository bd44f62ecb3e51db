import os from "node:os";
import { cpuBetween, sampleCpu } from "./cpu.ts";
import { checkpoint } from "./database.ts";
import type { LoadResult } from "./load.ts";
import { progress } from "./log.ts";
import type { QuireProcess } from "./server.ts";

/** One step of the run: how long it took, where the CPU went, and how much other processes took. */
export interface PhaseRecord {
  name: string;
  seconds: number;
  /** Requests the phase sent (warmup and failures included), when it is one request loop. */
  requests?: number;
  /**
   * CPU seconds of the bench client, the Quire process (both Quire processes while a second
   * instance runs) and its PostgreSQL during the phase.
   */
  cpuSeconds: { client: number; server: number; postgres: number };
  /** CPU time of processes outside the bench's tree, as a share of all CPUs over the phase. */
  othersCpuShare: number;
  /**
   * The server's peak RSS during the phase: VmHWM at its end, reset at its start (where the kernel
   * allows it: else the high-water mark of the run so far, and `peakOfPhase` is false).
   */
  peakRssMiB: number;
  /** VmHWM right before that reset: the peak since the previous phase's start, the gap between included. */
  peakBeforeMiB: number;
  peakOfPhase: boolean;
}

export const sentBy = (r: LoadResult) => r.warmup + r.requests + r.errors;

/**
 * Runs the run's phases one after another. Each starts after a CHECKPOINT, so that flushing the
 * previous phase's dirty pages (which PostgreSQL does anyway every few minutes) is not charged to
 * whichever phase happens to come next.
 */
export function phaseRunner(server: QuireProcess) {
  const records: PhaseRecord[] = [];
  const cpus = os.cpus().length;
  const more = new Set<QuireProcess>();
  const sample = () =>
    sampleCpu(
      server.pid,
      [...more].map((p) => p.pid),
    );
  async function run<T>(name: string, work: () => Promise<T>, requests?: (result: T) => number): Promise<T> {
    await checkpoint(server.databaseUrl);
    const peakBeforeMiB = (await server.memory()).peakKiB / 1024;
    const peakOfPhase = await server.resetPeak();
    const before = await sample();
    const start = performance.now();
    const result = await work();
    const seconds = (performance.now() - start) / 1000;
    const { othersShare, ...cpuSeconds } = cpuBetween(before, await sample(), seconds, cpus);
    if (othersShare > 0.1)
      progress(`warning: other processes used ${(othersShare * 100).toFixed(0)}% of the CPUs during ${name}`);
    records.push({
      name,
      seconds,
      ...(requests ? { requests: requests(result) } : {}),
      cpuSeconds,
      othersCpuShare: othersShare,
      peakRssMiB: (await server.memory()).peakKiB / 1024,
      peakBeforeMiB,
      peakOfPhase,
    });
    return result;
  }
  /**
   * Counts `other` (a second Quire instance) as the server in the CPU figures from the next sample
   * on, until the returned function is called. Register it as soon as it has started, and stop it
   * only outside a phase: see sampleCpu.
   */
  function alsoSample(other: QuireProcess): () => void {
    more.add(other);
    return () => more.delete(other);
  }
  return { run, records, alsoSample };
}
