// A pipeline process reading a large paged file (a PDF of thousands of pages) makes garbage much
// faster than V8 collects it: the reader's parsed pages, released every few pages, stay on the
// heap until the next full collection, which V8 puts off while the heap may still grow. The
// process's RSS then climbs by a hundred megabytes of garbage above what it holds alive.
// GarbageBound collects once the heap has grown a fixed budget past what the last collection
// kept, so the garbage a file leaves never exceeds that budget.
import { getHeapStatistics } from 'node:v8';

/** Heap growth past the last collection's survivors that starts the next collection. */
export const GARBAGE_BUDGET_BYTES = 32 * 1024 * 1024;

export interface GarbageBoundOptions {
  /** Bytes of heap in use now. */
  heapUsed?: () => number;
  /** A full collection; none where V8's is not exposed (a thread), and then nothing is done. */
  collect?: (() => void) | undefined;
  budgetBytes?: number;
}

export class GarbageBound {
  private readonly heapUsed: () => number;
  private readonly collect: (() => void) | undefined;
  private readonly budget: number;
  private live: number;
  /** Collections this bound started. */
  collections = 0;

  constructor(opts: GarbageBoundOptions = {}) {
    this.heapUsed = opts.heapUsed ?? (() => getHeapStatistics().used_heap_size);
    this.collect = 'collect' in opts ? opts.collect : exposedGc();
    this.budget = opts.budgetBytes ?? GARBAGE_BUDGET_BYTES;
    this.live = this.heapUsed();
  }

  /** Called where the reader has just let go of what it read: collects if the budget is spent. */
  check(): void {
    if (!this.collect || this.heapUsed() - this.live < this.budget) return;
    this.collect();
    this.collections++;
    this.live = this.heapUsed();
  }
}

/** V8's collector, exposed in a pipeline process (hosts.ts starts it with --expose-gc). */
function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? () => (gc as () => void)() : undefined;
}
