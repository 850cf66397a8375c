// The sign index's Hamming scan (sign-index.ts) on a thread of its own, so a hybrid query's
// keyword search runs on the event loop while its vectors are scanned beside it, on the second
// core, and concurrent queries do not queue their scans behind the event loop's SQL. The bits
// live in SharedArrayBuffers: a request carries views of them and the scan reads them in place.
// One thread per process, started on first use and held (ref'd) only while a scan is pending.
// Should it fail, every scan from then on runs inline on the caller's thread, as before.
import { Worker } from 'node:worker_threads';

/** Partitions smaller than this many slots are scanned inline: a round trip costs more. */
export const THREAD_MIN_SLOTS = 20_000;

export interface ScanInput {
  /** Sign bits, `stride` 32-bit words per slot, over a SharedArrayBuffer. */
  words: Uint32Array;
  /** 1 for a deleted slot, over a SharedArrayBuffer. */
  dead: Uint8Array;
  /** Slots to scan: 0 … size − 1 (slots appended after the request are not read). */
  size: number;
  stride: number;
  query: Uint32Array;
  count: number;
}

/**
 * The `count` live slots nearest to `query` by Hamming distance, ties broken by slot order, in
 * slot order. Self-contained (no outer names): the thread runs its source text.
 */
export function nearestSlots(
  words: Uint32Array,
  dead: Uint8Array,
  size: number,
  stride: number,
  query: Uint32Array,
  count: number,
): Uint32Array {
  const popcount = (x: number): number => {
    let v = x - ((x >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  };
  const distances = new Uint16Array(size);
  const histogram = new Uint32Array(stride * 32 + 2);
  for (let slot = 0, base = 0; slot < size; slot++, base += stride) {
    if (dead[slot] === 1) {
      distances[slot] = 65535;
      continue;
    }
    let d = 0;
    for (let w = 0; w < stride; w++) d += popcount(words[base + w]! ^ query[w]!);
    distances[slot] = d;
    histogram[d]!++;
  }
  // The distance at which `count` slots are reached: all nearer slots, then enough at it.
  let threshold = 0;
  let below = 0;
  while (threshold < histogram.length - 1 && below + histogram[threshold]! < count) {
    below += histogram[threshold]!;
    threshold++;
  }
  let atThreshold = count - below;
  const picked = new Uint32Array(Math.min(count, size));
  let n = 0;
  for (let slot = 0; slot < size && n < picked.length; slot++) {
    const d = distances[slot]!;
    if (d < threshold) picked[n++] = slot;
    else if (d === threshold && atThreshold > 0) {
      picked[n++] = slot;
      atThreshold--;
    }
  }
  return picked.subarray(0, n);
}

/** The thread's body; `nearestSlots` is defined before it in the thread's source. */
function scanThreadMain(): void {
  const { parentPort } = process.getBuiltinModule('node:worker_threads');
  parentPort!.on('message', (m: ScanInput & { id: number }) => {
    const slots = nearestSlots(m.words, m.dead, m.size, m.stride, m.query, m.count);
    parentPort!.postMessage({ id: m.id, slots }, [slots.buffer as ArrayBuffer]);
  });
}

interface Pending {
  input: ScanInput;
  resolve: (slots: Uint32Array) => void;
}

class ScanThread {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failed = false;
  private readonly worker: Worker;

  constructor() {
    const source = `const nearestSlots = ${nearestSlots.toString()};\n(${scanThreadMain.toString()})();`;
    this.worker = new Worker(source, { eval: true });
    this.worker.on('message', (reply: { id: number; slots: Uint32Array }) => {
      const pending = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      pending?.resolve(reply.slots);
    });
    // The scans it had not answered run inline; so does every later one.
    const fail = () => {
      if (this.failed) return;
      this.failed = true;
      for (const p of this.pending.values()) p.resolve(scanInline(p.input));
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
    // Held only while a scan waits for its answer (after the listeners: a 'message' listener
    // refs the thread's port again).
    this.worker.unref();
  }

  scan(input: ScanInput): Promise<Uint32Array> {
    if (this.failed) return Promise.resolve(scanInline(input));
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { input, resolve });
      this.worker.ref();
      this.worker.postMessage({ ...input, id });
    });
  }
}

function scanInline(input: ScanInput): Uint32Array {
  return nearestSlots(input.words, input.dead, input.size, input.stride, input.query, input.count);
}

let shared: ScanThread | null = null;

/** The nearest slots, scanned on the process's scan thread when the partition is big enough. */
export function scanNearest(input: ScanInput, threadMinSlots = THREAD_MIN_SLOTS): Promise<Uint32Array> {
  if (input.size < threadMinSlots) return Promise.resolve(scanInline(input));
  shared ??= new ScanThread();
  return shared.scan(input);
}
