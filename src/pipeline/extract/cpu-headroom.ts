// How many CPUs other processes are leaving idle, so the pool splits a PDF across threads only
// when the extra threads get CPUs of their own. On a saturated machine a split costs more CPU and
// finishes later than one thread; on an idle one it shortens the wall time (bench/RESULTS.md,
// section 5, times 2 threads against 1).
import { availableParallelism, cpus } from 'node:os';

export interface CpuHeadroom {
  /** CPUs not kept busy by other processes over the last sampling interval (this process's own use is excluded). */
  current(): number;
  stop(): void;
}

interface Snapshot {
  at: number;
  /** Busy CPU time of the whole machine, ms. */
  busy: number;
  /** CPU time of this process, every thread, ms. */
  own: number;
}

function snapshot(): Snapshot {
  let busy = 0;
  for (const { times } of cpus()) busy += times.user + times.nice + times.sys + times.irq;
  const own = process.cpuUsage();
  return { at: performance.now(), busy, own: (own.user + own.system) / 1000 };
}

/** Samples the machine every `intervalMs`; until the first sample it assumes nobody else is busy. */
export function sampleCpuHeadroom(intervalMs = 1_000): CpuHeadroom {
  const count = availableParallelism();
  let previous = snapshot();
  let othersBusy = 0;
  const timer = setInterval(() => {
    const next = snapshot();
    const elapsed = next.at - previous.at;
    if (elapsed > 0) {
      const others = (next.busy - previous.busy - (next.own - previous.own)) / elapsed;
      othersBusy = Math.min(count, Math.max(0, others));
    }
    previous = next;
  }, intervalMs);
  timer.unref();
  return { current: () => count - othersBusy, stop: () => clearInterval(timer) };
}
