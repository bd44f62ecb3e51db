import { readdir, readFile } from "node:fs/promises";

/** Linux reports CPU time in USER_HZ ticks, 100 per second on every platform Node supports. */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds so far: the whole machine's busy time, and what the bench's own processes used,
 * split by role. The split shows what a request costs where (Node's event loop is one thread);
 * the machine total shows how much other processes took, which on 2 cores skews every figure.
 */
export interface CpuSample {
  machineBusy: number;
  /** The bench client process. */
  client: number;
  /**
   * The Quire server process (its own threads, not its children), plus any other Quire process
   * being sampled with it (the second instance of the SSE phase) and that one's children.
   */
  server: number;
  /** Everything under the server: its PostgreSQL, including backends that have exited. */
  postgres: number;
}

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, in seconds. */
  own: number;
  /** cutime + cstime: children that exited and were waited for, so short-lived backends count. */
  children: number;
}

/**
 * `otherQuirePids`: more Quire processes whose CPU counts as the server's. Sample the same ones
 * before and after a phase, and stop none of them in between: a process that has exited takes its
 * CPU time with it (into our own cutime, which is not counted), and it would show as others'.
 */
export async function sampleCpu(serverPid: number, otherQuirePids: number[] = []): Promise<CpuSample> {
  const [machineBusy, processes] = await Promise.all([machineBusySeconds(), readProcesses()]);
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const underServer = descendants(processes, serverPid);
  const treeOf = (pid: number) =>
    (byPid.get(pid)?.own ?? 0) + descendants(processes, pid).reduce((sum, p) => sum + p.own + p.children, 0);
  const others = otherQuirePids.reduce((sum, pid) => sum + treeOf(pid), 0);
  return {
    machineBusy,
    client: byPid.get(process.pid)?.own ?? 0,
    server: (byPid.get(serverPid)?.own ?? 0) + others,
    postgres: underServer.reduce((sum, p) => sum + p.own + p.children, 0),
  };
}

/** CPU seconds between two samples: by role, and other processes' share of all CPUs. */
export function cpuBetween(before: CpuSample, after: CpuSample, seconds: number, cpus: number) {
  // A process that exited mid-phase (the server, when the run is interrupted) takes its time with
  // it: clamp, so the figures of an aborted phase are merely incomplete, not absurd.
  const delta = (role: keyof CpuSample) => Math.max(0, after[role] - before[role]);
  const [client, server, postgres] = [delta("client"), delta("server"), delta("postgres")];
  const others = delta("machineBusy") - client - server - postgres;
  return { client, server, postgres, othersShare: Math.min(1, Math.max(0, others / (seconds * cpus))) };
}

function descendants(processes: ProcStat[], root: number): ProcStat[] {
  const tree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of processes)
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
  }
  return processes.filter((p) => p.pid !== root && tree.has(p.pid));
}

/** Busy time from the first line of /proc/stat: everything but idle and iowait; steal counts as busy. */
async function machineBusySeconds(): Promise<number> {
  const [first = ""] = (await readFile("/proc/stat", "utf8")).split("\n");
  const [user, nice, system, , , irq, softirq, steal] = first.split(/\s+/).slice(1).map(Number);
  const ticks = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  return ticks / TICKS_PER_SECOND;
}

async function readProcesses(): Promise<ProcStat[]> {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")));
  return stats.flatMap((stat, k) => {
    // The command name may hold spaces and parentheses; the fields after its closing ')' do not.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields.length < 15) return [];
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return [
      {
        pid: Number(pids[k]),
        ppid: Number(fields[1]),
        own: ((utime ?? 0) + (stime ?? 0)) / TICKS_PER_SECOND,
        children: ((cutime ?? 0) + (cstime ?? 0)) / TICKS_PER_SECOND,
      },
    ];
  });
}
