// The extractor: a small pool of pipeline threads, each with a V8 heap cap, and a wall-time cap per
// document. A thread that runs out of heap, crashes or overruns is ended; only its document
// fails, and a fresh thread takes its place when the next document needs one. A long PDF is split
// into page ranges that idle threads extract side by side, when the machine has CPUs to spare.
// The same threads chunk every document's text (files, URLs and JSON alike): tokenizing is the
// pipeline's heaviest CPU work, and off the event loop it neither delays API requests nor stops
// a second core from helping. A "thread" that reads files is a child process (hosts.ts says why);
// one that only chunks texts is a worker thread. Both count against the pool's size.
import { statSync } from 'node:fs';
import { collectChunks } from '../../domain/chunk-batches.js';
import { contentTypeOf, formatSpec } from '../../domain/formats.js';
import type { ChunkStream, IndexTotals } from '../../domain/types.js';
import type { IndexPlan } from '../chunk/for-index.js';
import type { ChunkOptions } from '../chunk/options.js';
import { ChunkQueue } from './chunk-queue.js';
import { type CpuHeadroom, sampleCpuHeadroom } from './cpu-headroom.js';
import { ExtractionError } from './errors.js';
import { HostExit, type HostKind, startHost } from './hosts.js';
import { type PageRange, pdfParts } from './page-ranges.js';
import {
  chunkRowOf,
  crashError,
  doingWhat,
  type FinishedEnd,
  groupsInThreads,
  type Job,
  type JobTask,
  joinedParts,
  LEAN_PROCESS_FLAGS,
  QUEUED_IN_THREAD_MAX,
  replyChars,
  replyOcrPages,
  type Slot,
  slotToChunkNext,
  threadExecArgv,
  workerExecArgv,
} from './pool-jobs.js';
import { TakingTurns } from './taking-turns.js';
import { DEFAULT_MAX_TEXT_RATIO, DEFAULT_TEXT_FLOOR_CHARS, type TextLimitSettings } from './text-limit.js';
import {
  DEFAULT_MAX_TEXT_CHARS,
  type ExtractedText,
  type FileChunkOptions,
  type PipelineThreadOptions,
  type PipelineThreads,
  type SourceFormat,
  type WorkerData,
  type WorkerReply,
  type WorkerRequest,
} from './types.js';

/** Paged files from this size on are chunked by one thread as it reads them (streamsPaged). */
const PAGED_STREAM_FROM_BYTES = 16 * 1024 * 1024;

/**
 * A thread loads its modules in well under a second. The time cap only runs once it has, so
 * this guards against a thread that never gets there leaving its document waiting for ever.
 */
const STARTUP_TIMEOUT_MS = 60_000;

/**
 * A chunk job's end may be held back while its thread goes straight on to a short text queued
 * behind it, and handed on with that text's end (PipelineThreadOptions.finishRuns): the documents
 * then reach the store in one turn of the event loop, and their index writes share a transaction,
 * whose commit is most of a small document's write (bench/RESULTS.md, section 2). None is held
 * longer than the run's `holdMs`, and only behind a text of up to FINISH_HOLD_NEXT_MAX_CHARS
 * (about a millisecond of chunking); a document alone, or behind a long one, is handed on at once.
 */
const FINISH_HOLD_NEXT_MAX_CHARS = 64 * 1024;
const DEFAULT_FINISH_HOLD_MS = 10;
/** Ends handed on together at most, however many documents are in flight. */
const FINISH_RUN_LIMIT = 4;

/**
 * The longest run of ends a thread may hand on together without ever waiting for work, when up to
 * `inFlight` documents of one org share `threads` threads: what each thread's share leaves after
 * the text it chunks and the texts queued in it (1: each end at once).
 */
export function finishRunFor(inFlight: number, threads: number): number {
  const perThread = Math.floor(inFlight / Math.max(1, threads));
  return Math.max(1, Math.min(FINISH_RUN_LIMIT, perThread - 1 - QUEUED_IN_THREAD_MAX));
}

/**
 * A thread that has just handled a text this long is ended once it goes idle, and a fresh one
 * started when needed: its heap grew to several times the text, and V8 keeps such a heap long
 * after it is garbage. Starting a thread costs well under a second, little next to the seconds
 * such a document takes; the memory comes back at once (bench/neighbour.bench.ts).
 */
const RECYCLE_AFTER_CHARS = 8_000_000;

/** What the pool learns from outside; tests replace it to make splitting deterministic. */
export interface PoolDeps {
  cpuHeadroom: CpuHeadroom;
  /** Told how each PDF was divided among threads. */
  onPdfPlan?: (ranges: PageRange[]) => void;
  /** Told when a text is sent to a busy thread, to chunk when the one it is chunking is done. */
  onQueuedInThread?: () => void;
  /** Told when a thread is ended for having been idle for `idleStopMs`. */
  onIdleStop?: () => void;
}

export function createPipelineThreads(opts: PipelineThreadOptions): PipelineThreads {
  // The sampler asks for the pool's processes once a second, from the first interval on.
  let pool: PipelineThreadPool | null = null;
  pool = new PipelineThreadPool(opts, {
    cpuHeadroom: sampleCpuHeadroom(undefined, () => pool?.processIds() ?? []),
  });
  return pool;
}

export function createWorkerPool(opts: PipelineThreadOptions, deps: PoolDeps): PipelineThreads {
  return new PipelineThreadPool(opts, deps);
}

class PipelineThreadPool implements PipelineThreads {
  private readonly slots = new Set<Slot>();
  /** Documents waiting for a thread. */
  private readonly queue = new TakingTurns<Job>();
  private readonly jobs = new Set<Job>();
  private readonly exiting = new Set<Promise<unknown>>();
  /** Callers of warm() waiting for a thread's chunker to be warm (or for the thread to fail). */
  private warming: Array<() => void> = [];
  /** Whether a thread has warmed its chunker: the tables are built and the code is compiled. */
  private hasWarmed = false;
  private closed = false;
  private nextJobId = 1;

  constructor(
    private readonly opts: PipelineThreadOptions,
    private readonly deps: PoolDeps,
  ) {
    if (!(opts.maxWorkers >= 1)) {
      deps.cpuHeadroom.stop();
      throw new RangeError('maxWorkers must be at least 1');
    }
  }

  extract(path: string, format: SourceFormat, signal?: AbortSignal): Promise<ExtractedText> {
    return this.submit({ type: 'extract', path, format }, signal, null) as Promise<ExtractedText>;
  }

  async chunk(text: string, options: ChunkOptions, signal?: AbortSignal): Promise<IndexPlan> {
    const { chunks, totals } = await collectChunks({
      ...this.indexText(text, options, signal),
      contentType: null,
      bytes: null,
    });
    return { chunks, ...totals, language: totals.language ?? null };
  }

  indexText(text: string, options: ChunkOptions, signal?: AbortSignal, group?: string): ChunkStream {
    return this.stream({ type: 'indexText', text, options }, signal, group ?? null);
  }

  indexFile(
    path: string,
    format: SourceFormat,
    options: FileChunkOptions,
    signal?: AbortSignal,
    group?: string,
  ): ChunkStream {
    const paged = formatSpec(format).paged;
    if (!paged || this.streamsPaged(path)) {
      return this.stream({ type: 'indexFile', path, format, options }, signal, group ?? null, paged);
    }
    // A paged file's (a PDF's) pages may come from several threads: they are joined here, then chunked.
    let chunked: ChunkStream | null = null;
    let ocrPages: number | null = null;
    const chunks = async function* (this: PipelineThreadPool) {
      const extracted = (await this.submit(
        { type: 'extract', path, format },
        signal,
        group ?? null,
      )) as ExtractedText;
      ocrPages = extracted.ocrPages;
      chunked = this.indexText(extracted.text, { ...options, pages: extracted.pages }, signal, group);
      yield* chunked.chunks;
    }.call(this);
    return {
      chunks,
      totals: () => {
        if (!chunked) throw new Error('the totals are known only once every chunk has been read');
        return { ...chunked.totals(), ocrPages };
      },
    };
  }

  /**
   * Whether a paged file is large enough to be read and chunked by one thread a page at a time:
   * split across threads, each would hold the whole file, and the joined text would cross the
   * event loop twice (bench/RESULTS.md, section 7). One that cannot be read goes the usual way,
   * which reports why.
   */
  private streamsPaged(path: string): boolean {
    try {
      return statSync(path).size >= (this.opts.pagedStreamFromBytes ?? PAGED_STREAM_FROM_BYTES);
    } catch {
      return false;
    }
  }

  /** A job whose chunks are handed on as they come; the reader letting go ends the job. */
  private stream(
    task: JobTask,
    signal: AbortSignal | undefined,
    group: string | null,
    lean = false,
  ): ChunkStream {
    const stop = new AbortController();
    const both = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    const queue = new ChunkQueue((reason) => stop.abort(reason));
    const done = this.submit(task, both, group, (job) => {
      job.sink = queue;
      job.lean = lean;
    }) as Promise<IndexTotals>;
    queue.follow(done);
    return queue.stream();
  }

  private submit(
    task: JobTask,
    signal: AbortSignal | undefined,
    group: string | null,
    prepare?: (job: Job) => void,
  ): Promise<ExtractedText | IndexTotals> {
    if (this.closed) return Promise.reject(new Error('the extractor is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<ExtractedText | IndexTotals>((resolve, reject) => {
      const job: Job = {
        id: this.nextJobId++,
        task,
        group,
        resolve,
        reject,
        signal,
        onAbort: null,
        timer: null,
        deadline: 0,
        loadingThreads: 0,
        pausedWithMs: null,
        slots: new Set(),
        parts: new Map(),
        ocr: { recognised: 0, skipped: 0 },
        sink: null,
        nextIndex: 0,
        chars: task.type === 'indexText' ? task.text.length : 0,
        partsExpected: 1,
        settled: false,
        lean: false,
      };
      if (signal) {
        job.onAbort = () => this.settle(job, signal.reason);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      prepare?.(job);
      this.jobs.add(job);
      this.queue.push(job);
      this.pump();
    });
  }

  /** The ids of the pool's live child processes (the threads that read files). */
  processIds(): number[] {
    const ids: number[] = [];
    for (const slot of this.slots) if (slot.host.pid !== null) ids.push(slot.host.pid);
    return ids;
  }

  warm(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.hasWarmed) return Promise.resolve();
    if (this.slots.size === 0) this.spawn('thread');
    return new Promise((resolve) => this.warming.push(resolve));
  }

  private warmed(): void {
    const waiting = this.warming;
    this.warming = [];
    for (const resolve of waiting) resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.deps.cpuHeadroom.stop();
    this.warmed();
    // Finished documents are handed on, not failed with the rest.
    for (const slot of this.slots) this.deliverFinished(slot);
    for (const job of [...this.jobs]) this.settle(job, new Error('the extractor is closed'));
    for (const slot of [...this.slots]) this.kill(slot);
    await Promise.all([...this.exiting]);
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      const job = this.queue.next(groupsInThreads(this.slots));
      const { task } = job;
      const slot =
        task.type === 'indexText'
          ? (this.takeSlot('thread') ?? slotToChunkNext(this.slots))
          : this.takeSlot('process', job.lean);
      if (!slot) return;
      this.queue.take(job);
      const request: WorkerRequest =
        task.type === 'indexText'
          ? { ...task, jobId: job.id }
          : { ...task, jobId: job.id, pdfMaxPages: this.opts.pdfMaxPages };
      if (slot.job) {
        // Queued in the thread behind the text it is chunking; its clock starts when its turn comes.
        slot.queued.push(job);
        slot.host.post(request);
        this.deps.onQueuedInThread?.();
        continue;
      }
      if (slot.ready) this.startClock(job);
      this.assign(slot, job, request);
    }
  }

  /**
   * The time cap runs from the moment a loaded thread has the document: neither waiting behind
   * other documents nor a new thread loading its modules is the document's fault.
   */
  private startClock(job: Job): void {
    if (job.timer || job.settled || job.loadingThreads > 0) return;
    this.armClock(job, Date.now() + this.opts.timeoutMs);
  }

  /**
   * A thread loads its parsers for the job (its first file): the cap stops until it has. Several
   * threads of one PDF may each load theirs; the clock runs again when the last is done.
   */
  private pauseClock(job: Job): void {
    if (job.settled || job.loadingThreads++ > 0 || !job.timer) return;
    clearTimeout(job.timer);
    job.timer = null;
    job.pausedWithMs = Math.max(0, job.deadline - Date.now());
  }

  private resumeClock(job: Job): void {
    if (job.loadingThreads === 0 || --job.loadingThreads > 0 || job.settled) return;
    const left = job.pausedWithMs;
    job.pausedWithMs = null;
    if (left !== null) this.armClock(job, Date.now() + left);
    else this.startClock(job);
  }

  private armClock(job: Job, deadline: number): void {
    job.deadline = deadline;
    job.timer = setTimeout(
      () => {
        this.settle(
          job,
          new ExtractionError('timeout', `${doingWhat(job.task)} took longer than ${this.opts.timeoutMs} ms`),
        );
      },
      Math.max(0, deadline - Date.now()),
    );
  }

  /**
   * An idle thread that can do the work, or a new one while the pool is below its size. A text can
   * be chunked by either kind; a file is read only in a process, which takes the place of an idle
   * thread when the pool is full.
   */
  private takeSlot(kind: HostKind, lean = false): Slot | null {
    let idle: Slot | null = null;
    for (const slot of this.slots) {
      if (slot.job) continue;
      if (slot.host.kind === kind && slot.lean === lean) return slot;
      idle ??= slot;
    }
    if (idle && kind === 'thread') return idle;
    if (this.slots.size >= this.opts.maxWorkers) {
      if (!idle) return null;
      this.kill(idle);
    }
    return this.spawn(kind, lean);
  }

  /** Threads a PDF may add: idle or not yet started ones, as far as there are idle CPUs to run them. */
  private helpersAvailable(): number {
    let busy = 0;
    for (const slot of this.slots) if (slot.job) busy++;
    const threads = this.opts.maxWorkers - busy;
    // Every busy thread of ours, the PDF's first included, needs a CPU of its own first. Rounded:
    // a CPU that others use less than half the time is worth a thread.
    const cpus = Math.round(this.deps.cpuHeadroom.current() - busy);
    return Math.max(0, Math.min(threads, cpus));
  }

  private textLimits(): TextLimitSettings {
    return {
      maxChars: this.opts.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS,
      maxRatio: this.opts.maxTextRatio ?? DEFAULT_MAX_TEXT_RATIO,
      floorChars: this.opts.textFloorChars ?? DEFAULT_TEXT_FLOOR_CHARS,
    };
  }

  private spawn(kind: HostKind, lean = false): Slot {
    const host = startHost(kind, {
      data: {
        searchLanguage: this.opts.searchLanguage ?? 'auto',
        ocr: this.opts.ocr ?? { enabled: true, languages: ['eng'] },
        text: this.textLimits(),
      } satisfies WorkerData,
      maxHeapMb: this.opts.maxHeapMb,
      execArgv:
        kind === 'thread' ? threadExecArgv() : [...workerExecArgv(), ...(lean ? LEAN_PROCESS_FLAGS : [])],
      onMessage: (message) => this.onReply(slot, message),
      onExit: (exit) => this.onCrash(slot, exit),
    });
    const slot: Slot = {
      host,
      job: null,
      queued: [],
      discard: null,
      ready: false,
      dead: false,
      lean: kind === 'process' && lean,
      recycle: false,
      ranOcr: false,
      idleStop: null,
      finished: null,
      startup: setTimeout(() => {
        this.onCrash(slot, new HostExit(`not started after ${STARTUP_TIMEOUT_MS / 1000} s`, false));
      }, STARTUP_TIMEOUT_MS),
    };
    slot.startup.unref();
    this.slots.add(slot);
    return slot;
  }

  private assign(slot: Slot, job: Job, request: WorkerRequest): void {
    clearTimeout(slot.idleStop ?? undefined);
    slot.idleStop = null;
    slot.job = job;
    job.slots.add(slot);
    // Busy threads keep the process alive; idle ones do not, so a forgotten close() cannot hang it.
    slot.host.ref();
    slot.host.post(request);
  }

  /**
   * The thread finished its job: it goes idle, or on to the text queued in it. The ends it held
   * back are handed on first, unless `end` (the finished chunk job's) joins them to wait for that
   * text (holdFinish); true when it did, and is not to be settled now.
   */
  private release(slot: Slot, end?: FinishedEnd): boolean {
    slot.job?.slots.delete(slot);
    clearTimeout(slot.discard ?? undefined);
    slot.discard = null;
    const next = slot.queued.shift() ?? null;
    slot.job = next;
    const held = end !== undefined && this.holdFinish(slot, end);
    if (!held) this.deliverFinished(slot);
    if (!next) {
      if (slot.recycle || (slot.ranOcr && this.queue.length === 0)) this.kill(slot);
      else {
        slot.host.unref();
        this.armIdleStop(slot);
      }
      return held;
    }
    next.slots.add(slot);
    if (!next.settled) {
      this.startClock(next);
      return held;
    }
    // Cancelled while it waited: the thread chunks it anyway, and is ended if that overruns.
    slot.discard = setTimeout(() => {
      this.kill(slot);
      this.pump();
    }, this.opts.timeoutMs);
    return held;
  }

  /**
   * An idle thread holds its heap, its loaded parsers and the tokenizer's tables for as long as it
   * lives: once it has waited `idleStopMs` for work, it is ended, the last one too, and the next
   * document starts a fresh one. Only a thread with no document and none queued in it is ended.
   */
  private armIdleStop(slot: Slot): void {
    const after = this.opts.idleStopMs ?? 0;
    if (after <= 0 || slot.dead || slot.job || slot.idleStop) return;
    slot.idleStop = setTimeout(() => {
      slot.idleStop = null;
      if (slot.job || slot.queued.length > 0) return;
      this.kill(slot);
      // Ended before its chunker was warm: whoever waits for that is not kept waiting.
      this.warmed();
      this.deps.onIdleStop?.();
    }, after);
    slot.idleStop.unref();
  }

  private kill(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    clearTimeout(slot.startup);
    clearTimeout(slot.idleStop ?? undefined);
    clearTimeout(slot.discard ?? undefined);
    this.slots.delete(slot);
    slot.job?.slots.delete(slot);
    slot.job = null;
    // The texts queued behind the thread's job are not at fault: they go first to the next thread.
    const queued = slot.queued;
    slot.queued = [];
    for (const job of queued.reverse()) if (!job.settled) this.queue.unshift(job);
    const exited = slot.host.end(EXIT_GRACE_MS);
    this.exiting.add(exited);
    void exited.finally(() => this.exiting.delete(exited));
    // What the thread finished before it was ended is done.
    this.deliverFinished(slot);
  }

  /**
   * Holds back `end`, a chunk job the thread has just finished, if the thread went on to a
   * short text (see finishRunFor); false when it is to be handed on now.
   */
  private holdFinish(slot: Slot, end: FinishedEnd): boolean {
    const next = slot.job;
    if (!next || next.settled || next.task.type !== 'indexText') return false;
    if (next.task.text.length > FINISH_HOLD_NEXT_MAX_CHARS) return false;
    const run = slot.finished;
    if ((run?.done.length ?? 0) + 1 >= (this.opts.finishRuns?.max ?? 1)) return false;
    // Its thread is done with it: its time cap no longer applies.
    if (end.job.timer) clearTimeout(end.job.timer);
    end.job.timer = null;
    if (run) run.done.push(end);
    else {
      slot.finished = {
        done: [end],
        timer: setTimeout(
          () => this.deliverFinished(slot),
          this.opts.finishRuns?.holdMs ?? DEFAULT_FINISH_HOLD_MS,
        ),
      };
    }
    return true;
  }

  /** Hands on the ends the slot holds back, in the order its thread finished them. */
  private deliverFinished(slot: Slot): void {
    const run = slot.finished;
    if (!run) return;
    slot.finished = null;
    clearTimeout(run.timer);
    // One cancelled meanwhile was settled then; settle() ignores it.
    for (const { job, totals } of run.done) this.settle(job, null, totals);
  }

  private onReply(slot: Slot, message: WorkerReply): void {
    if (slot.dead) return;
    if (message.type === 'warmed') {
      this.hasWarmed = true;
      this.warmed();
      return;
    }
    if (message.type === 'ready') {
      slot.ready = true;
      clearTimeout(slot.startup);
      if (slot.job) this.startClock(slot.job);
      else this.armIdleStop(slot);
      return;
    }
    const job = slot.job;
    if (!job || job.id !== message.jobId) return;
    job.chars += replyChars(message);
    if (job.chars >= RECYCLE_AFTER_CHARS) slot.recycle = true;
    if (replyOcrPages(message) > 0) slot.ranOcr = true;
    switch (message.type) {
      case 'loading':
        this.pauseClock(job);
        return;
      case 'loaded':
        this.resumeClock(job);
        return;
      case 'pageCount':
        this.planPdf(job, slot, message.numPages);
        return;
      case 'pageTexts':
        this.release(slot);
        job.parts.set(message.from, message.texts);
        job.ocr.recognised += message.ocrPages;
        job.ocr.skipped += message.ocrSkipped;
        if (job.parts.size === job.partsExpected) {
          const joined = joinedParts(job, this.textLimits());
          if (joined instanceof ExtractionError) this.settle(job, joined);
          else this.settle(job, null, joined);
        }
        break;
      case 'text': {
        this.release(slot);
        const format = job.task.type === 'indexText' ? 'txt' : job.task.format;
        this.settle(job, null, {
          text: message.text,
          pages: null,
          format,
          contentType: contentTypeOf(format),
          ocrPages: message.ocrPages,
        });
        break;
      }
      case 'chunkSpans': {
        // The thread sends more only as its reader takes these.
        job.sink?.push(
          message.spans.map((span) => chunkRowOf(job, span, job.nextIndex++)),
          () => {
            if (!slot.dead) {
              slot.host.post({ type: 'spansRead', jobId: job.id } satisfies WorkerRequest);
            }
          },
        );
        // More follow from the same thread: it stays the job's.
        return;
      }
      case 'chunks': {
        const totals: IndexTotals = {
          tokenCount: message.tokenCount,
          contentSha256: message.contentSha256,
          language: message.language,
          // Only files that OCR read say so; a text's totals stay what chunkForIndex gives.
          ...(message.ocrPages !== null ? { ocrPages: message.ocrPages } : {}),
        };
        if (!this.release(slot, { job, totals })) this.settle(job, null, totals);
        break;
      }
      case 'failed':
        this.release(slot);
        this.settle(job, new ExtractionError(message.code, message.message));
        break;
      case 'error':
        this.release(slot);
        this.settle(job, new Error(message.message));
        break;
    }
    this.pump();
  }

  /**
   * Splits a PDF across threads nobody else is waiting for, on CPUs nobody else is using.
   * Documents still queued get the threads instead: splitting then would only make them wait.
   */
  private planPdf(job: Job, first: Slot, numPages: number): void {
    const helpers = this.queue.length === 0 ? this.helpersAvailable() : 0;
    const ranges = pdfParts(numPages, helpers);
    this.deps.onPdfPlan?.(ranges);
    job.partsExpected = ranges.length;
    const [own, ...others] = ranges;
    first.host.post({ type: 'pdfPlan', jobId: job.id, ...own! } satisfies WorkerRequest);
    if (job.task.type !== 'extract') return;
    for (const range of others) {
      this.assign(this.takeSlot('process')!, job, {
        type: 'extract',
        jobId: job.id,
        path: job.task.path,
        format: job.task.format,
        pdfMaxPages: this.opts.pdfMaxPages,
        pdfPart: range,
      });
    }
  }

  private onCrash(slot: Slot, error: HostExit): void {
    if (slot.dead) return;
    const job = slot.job;
    this.kill(slot);
    // A thread that cannot start does not hold up whoever waits for one: documents meet the error.
    this.warmed();
    if (job) this.settle(job, crashError(error, slot.ready, this.opts.maxHeapMb, job.task.type));
    this.pump();
  }

  /** Ends a document once: clears its timer and listener, stops threads still working on it. */
  private settle(job: Job, error: unknown, result?: ExtractedText | IndexTotals): void {
    if (job.settled) return;
    job.settled = true;
    this.jobs.delete(job);
    if (job.timer) clearTimeout(job.timer);
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    this.queue.remove(job);
    // A thread still busy with a failed, timed-out or aborted document may be stuck in it: the
    // only way to get it back is to end it.
    for (const slot of [...job.slots]) this.kill(slot);
    if (error === null && result) job.resolve(result);
    else job.reject(error);
    this.pump();
  }
}

/** How long a thread asked to end may take to reach the end of its task before it is stopped. */
const EXIT_GRACE_MS = 1_000;
