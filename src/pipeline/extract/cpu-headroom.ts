// How many CPUs other processes are leaving idle, so the pool splits a PDF across threads only
// when the extra threads get CPUs of their own. The pool's own work, in this process's threads and
// in the child processes that read files, is not other processes' use. On a saturated machine a split costs more CPU and
// finishes later than one thread; on an idle one it shortens the wall time (bench/RESULTS.md,
// section 5, times 2 threads against 1).
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';

export interface CpuHeadroom {
  /** CPUs not kept busy by other processes over the last sampling interval (the pool's own use is excluded). */
  current(): number;
  stop(): void;
}

interface Snapshot {
  at: number;
  /** Busy CPU time of the whole machine, ms. */
  busy: number;
  /** CPU time of this process, every thread, ms. */
  own: number;
  /** CPU time of each of the pool's own processes, ms, by process id. */
  processes: Map<number, number>;
}

/** USER_HZ: /proc gives CPU times in ticks of 10 ms on Linux. */
const MS_PER_TICK = 10;

/** CPU time (user and system) a live process has used, ms; null when it cannot be read (gone, not Linux). */
function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name (which may hold spaces): utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return null;
  }
}

function snapshot(processIds: () => Iterable<number>): Snapshot {
  let busy = 0;
  for (const { times } of cpus()) busy += times.user + times.nice + times.sys + times.irq;
  const own = process.cpuUsage();
  const processes = new Map<number, number>();
  for (const pid of processIds()) {
    const ms = processCpuMs(pid);
    if (ms !== null) processes.set(pid, ms);
  }
  return { at: performance.now(), busy, own: (own.user + own.system) / 1000, processes };
}

/** What the pool's own processes used between two snapshots; one started since counts whole. */
function processesUsed(previous: Snapshot, next: Snapshot): number {
  let used = 0;
  for (const [pid, ms] of next.processes) used += ms - (previous.processes.get(pid) ?? 0);
  return used;
}

/**
 * Samples the machine every `intervalMs`; until the first sample it assumes nobody else is busy.
 * `processIds`: the pool's own child processes, whose CPU is the pool's and not other processes'.
 */
export function sampleCpuHeadroom(
  intervalMs = 1_000,
  processIds: () => Iterable<number> = () => [],
): CpuHeadroom {
  const count = availableParallelism();
  let previous = snapshot(processIds);
  let othersBusy = 0;
  const timer = setInterval(() => {
    const next = snapshot(processIds);
    const elapsed = next.at - previous.at;
    if (elapsed > 0) {
      const ours = next.own - previous.own + processesUsed(previous, next);
      const others = (next.busy - previous.busy - ours) / elapsed;
      othersBusy = Math.min(count, Math.max(0, others));
    }
    previous = next;
  }, intervalMs);
  timer.unref();
  return { current: () => count - othersBusy, stop: () => clearInterval(timer) };
}
