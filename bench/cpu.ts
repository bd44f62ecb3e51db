import { readdir, readFile } from "node:fs/promises";

/** Linux reports CPU time in USER_HZ ticks, 100 per second on every platform Node supports. */
const TICKS_PER_SECOND = 100;

/** CPU seconds so far: the whole machine's busy time, and the part this bench's processes used. */
export interface CpuSample {
  machineBusy: number;
  ours: number;
}

/**
 * The bench shares its machine with whatever else runs there, and on 2 cores any other busy
 * process skews every figure. Sampling before and after a phase tells how much CPU others took.
 * "Ours" is the process tree under this process (the bench, Quire, its PostgreSQL), each with the
 * time of its exited children (`cutime`), so PostgreSQL backends that came and went still count.
 */
export async function sampleCpu(): Promise<CpuSample> {
  const [machineBusy, processes] = await Promise.all([machineBusySeconds(), readProcesses()]);
  const tree = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of processes)
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
  }
  const ours = processes.filter((p) => tree.has(p.pid)).reduce((sum, p) => sum + p.cpuSeconds, 0);
  return { machineBusy, ours };
}

/** The share of the machine's capacity (all CPUs) that other processes used between two samples. */
export function othersShare(before: CpuSample, after: CpuSample, seconds: number, cpus: number): number {
  const others = after.machineBusy - before.machineBusy - (after.ours - before.ours);
  return Math.max(0, others / (seconds * cpus));
}

/** Busy time from the first line of /proc/stat: everything but idle and iowait; steal counts as busy. */
async function machineBusySeconds(): Promise<number> {
  const first = (await readFile("/proc/stat", "utf8")).split("\n")[0]!;
  const [user, nice, system, , , irq, softirq, steal] = first.split(/\s+/).slice(1).map(Number);
  return (
    ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) /
    TICKS_PER_SECOND
  );
}

async function readProcesses(): Promise<{ pid: number; ppid: number; cpuSeconds: number }[]> {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")));
  return stats.flatMap((stat, k) => {
    // The command name may hold spaces and parentheses; the fields after its closing ')' do not.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields.length < 15) return [];
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    const ticks = (utime ?? 0) + (stime ?? 0) + (cutime ?? 0) + (cstime ?? 0);
    return [{ pid: Number(pids[k]), ppid: Number(fields[1]), cpuSeconds: ticks / TICKS_PER_SECOND }];
  });
}
