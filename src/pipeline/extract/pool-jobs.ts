// The pool's records of threads and documents, and how a thread's replies and crashes read.
import { statSync } from 'node:fs';
import { formatSpec } from '../../domain/formats.js';
import type { ChunkRow, IndexTotals } from '../../domain/types.js';
import type { ChunkOptions } from '../chunk/options.js';
import { FORMAT_HANDLERS } from '../formats/handlers.js';
import type { ChunkQueue } from './chunk-queue.js';
import { ExtractionError } from './errors.js';
import type { HostExit, PipelineHost } from './hosts.js';
import { assemblePages, unreadScan } from './pages.js';
import { type TextLimitSettings, textLimitOf } from './text-limit.js';
import type { ChunkSpan, ExtractedText, FileChunkOptions, SourceFormat, WorkerReply } from './types.js';

/** A text waits inside a busy thread only behind texts this short in all (about 50 ms of chunking). */
const QUEUE_BEHIND_MAX_CHARS = 1_000_000;
/** Texts that may wait inside one busy thread. */
export const QUEUED_IN_THREAD_MAX = 2;

/** A pipeline thread or process (hosts.ts); both are called threads in the pool's words. */
export interface Slot {
  host: PipelineHost;
  /** The document this thread works on, if any. */
  job: Job | null;
  /**
   * Texts already sent to this thread, to chunk in order once `job` (also a chunk job) is done:
   * the thread then never waits for the event loop to hand it its next text, even while the event
   * loop is busy for as long as a text takes to chunk.
   */
  queued: Job[];
  /** Kills the thread if a text that was cancelled while it waited in `queued` takes too long. */
  discard: NodeJS.Timeout | null;
  /** The thread finished loading its modules: a crash after this is the document's fault. */
  ready: boolean;
  /** Terminated or crashed; its remaining events are ignored. */
  dead: boolean;
  /** A process started with LEAN_PROCESS_FLAGS, for a large paged file (see Job.lean). */
  lean: boolean;
  /** Handled a text of RECYCLE_AFTER_CHARS or more: ended once idle, to give its memory back. */
  recycle: boolean;
  /**
   * Ran OCR: Tesseract's wasm memory (hundreds of MB after a 300 dpi page) never shrinks, so the
   * thread is ended once it is idle with nothing queued. A run of scans keeps one thread and its
   * loaded engine; the memory comes back when the run is over.
   */
  ranOcr: boolean;
  startup: NodeJS.Timeout;
  /** Ends the thread once it has had nothing to do for `idleStopMs` (see armIdleStop). */
  idleStop: NodeJS.Timeout | null;
  /**
   * Chunk jobs the thread has finished whose ends wait for the short text it went on to (see the
   * pool's holdFinish), so that the documents are handed on together.
   */
  finished: FinishedRun | null;
}

/** A chunk job the thread has finished, and its totals. */
export interface FinishedEnd {
  job: Job;
  totals: IndexTotals;
}

/** Finished chunk jobs held back to be handed on with the next one, and the cap on the wait. */
export interface FinishedRun {
  done: FinishedEnd[];
  timer: NodeJS.Timeout;
}

/** What a job's first thread is asked to do; the pool adds the job id. */
export type JobTask =
  | { type: 'extract'; path: string; format: SourceFormat }
  | { type: 'indexFile'; path: string; format: SourceFormat; options: FileChunkOptions }
  | { type: 'indexText'; text: string; options: ChunkOptions };

export interface Job {
  id: number;
  task: JobTask;
  /** Whose document it is: waiting documents take turns between groups (orgs). */
  group: string | null;
  resolve: (result: ExtractedText | IndexTotals) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
  timer: NodeJS.Timeout | null;
  /** When `timer` fires (ms since the epoch). */
  deadline: number;
  /** Threads loading their parsers for this job: its clock is stopped meanwhile. */
  loadingThreads: number;
  /** What was left of the time cap when the clock stopped. */
  pausedWithMs: number | null;
  slots: Set<Slot>;
  /** PDF page texts by the first page of each range. */
  parts: Map<number, string[]>;
  /** Of a PDF's pages reported so far: read by OCR, and needing OCR while it was off. */
  ocr: { recognised: number; skipped: number };
  /** Where a chunking job's chunks go as they come; null for an extraction alone. */
  sink: ChunkQueue | null;
  /** The index of the next chunk handed to `sink`. */
  nextIndex: number;
  /** Characters of text the job's threads have handled: extracted, chunked or reported. */
  chars: number;
  partsExpected: number;
  settled: boolean;
  /**
   * A large paged file, read and chunked a page at a time by one process: it goes to a process
   * whose V8 heap grows slowly (LEAN_PROCESS_FLAGS).
   */
  lean: boolean;
}

/**
 * V8 flags of a process that reads a large paged file (a PDF of 16 MiB or more). Its memory is
 * the file's bytes and what the PDF reader throws away page after page; with V8's defaults that
 * garbage piles up to about the size of the file before a full collection. A smaller young
 * generation and a heap that grows by 20% instead of V8's default factor collect it sooner, at a
 * cost in time on such a file (bench/RESULTS.md, section 7 and its table of changes). Other files
 * keep the defaults: they would pay the time and have little to gain.
 */
export const LEAN_PROCESS_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/** Flags of a script given on the command line, each followed by its value unless written with `=`. */
const SCRIPT_FLAGS = new Set(['--input-type', '-e', '--eval', '-p', '--print']);

/**
 * A pipeline process's Node flags: the process's own (source maps, profilers, loaders, V8's), but
 * not those of a script given on the command line (-e, -p and --input-type): the child would run
 * that script instead of its own.
 */
export function workerExecArgv(): string[] {
  const args: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i]!;
    if (SCRIPT_FLAGS.has(arg)) i++;
    else if (!SCRIPT_FLAGS.has(arg.split('=', 1)[0]!)) args.push(arg);
  }
  return args;
}

/**
 * A thread's Node flags: none given, so that it inherits the process's as Node passes them on,
 * leaving out those a thread cannot take (V8's heap and stack sizes, --expose-gc, --title), which
 * a list given to a Worker may not hold at all: `node --max-old-space-size=4096 … serve` would
 * start no thread. Only after a script given on the command line is a list given, without the
 * script's flags: --input-type stops a thread from starting.
 */
export function threadExecArgv(): string[] | undefined {
  const scriptGiven = process.execArgv.some((arg) => SCRIPT_FLAGS.has(arg.split('=', 1)[0]!));
  return scriptGiven ? workerExecArgv() : undefined;
}

export function crashError(exit: HostExit, ready: boolean, maxHeapMb: number, task: JobTask['type']): Error {
  // Before the thread has loaded its modules, nothing it did depended on the document: a fault
  // of the installation or configuration, not something the document should fail for.
  if (!ready) return new Error(`the extraction thread failed to start (${exit.message})`);
  const doing = task === 'indexText' ? 'chunking' : 'extracting';
  if (exit.outOfMemory) {
    return new ExtractionError(
      'too_large',
      `${doing} the document needs more than ${maxHeapMb} MB of memory`,
    );
  }
  // Our chunker crashing on a text is our bug, not a corrupt file: an untyped error is retried.
  if (task === 'indexText') return new Error(`the chunking thread crashed (${exit.message})`);
  return new ExtractionError('corrupt', `the extraction thread crashed on this document (${exit.message})`);
}

/** A reported span as a chunk: its own text, or the slice of the text the job sent. */
export function chunkRowOf(job: Job, span: ChunkSpan, index: number): ChunkRow {
  const text =
    span.text ?? (job.task.type === 'indexText' ? job.task.text.slice(span.charStart, span.charEnd) : '');
  return {
    index,
    text,
    tokenCount: span.tokenCount,
    charStart: span.charStart,
    charEnd: span.charEnd,
    pageStart: span.pageStart,
    pageEnd: span.pageEnd,
    words: span.words,
  };
}

/** Characters of text a reply carries. */
export function replyChars(message: WorkerReply): number {
  switch (message.type) {
    case 'text':
      return message.text.length;
    case 'pageTexts':
      return message.texts.reduce((n, text) => n + text.length, 0);
    case 'chunkSpans':
      return message.spans.reduce((n, span) => n + (span.text?.length ?? 0), 0);
    default:
      return 0;
  }
}

/** Pages a reply says OCR read. */
export function replyOcrPages(message: WorkerReply): number {
  switch (message.type) {
    case 'pageTexts':
    case 'text':
    case 'chunks':
      return message.ocrPages ?? 0;
    default:
      return 0;
  }
}

export function doingWhat(task: JobTask): string {
  if (task.type === 'indexText') return 'chunking';
  return task.type === 'indexFile' ? 'extraction and chunking' : 'extraction';
}

/** A PDF's text once every part's pages are in: joined, or why the document fails. */
export function joinedParts(job: Job, limits: TextLimitSettings): ExtractedText | ExtractionError {
  // Only an extraction asks for pages; the fallback keeps the compiler content.
  const format = job.task.type === 'extract' ? job.task.format : 'pdf';
  const assembled = assemblePages(job.parts, format, job.ocr.recognised);
  const empty = unreadScan(assembled.text.trim() !== '', job.ocr, formatSpec(format).name);
  if (empty) return empty;
  if (job.task.type !== 'extract') return assembled;
  // Pages joined here are held to the file's text bound here.
  try {
    const unpacks = FORMAT_HANDLERS[job.task.format].unpacks === true;
    textLimitOf(statSync(job.task.path).size, limits, unpacks).check(assembled.text.length);
    return assembled;
  } catch (error) {
    if (error instanceof ExtractionError) return error;
    throw error;
  }
}

/** Documents in threads (running or queued in one), by group. */
export function groupsInThreads(slots: Iterable<Slot>): Map<string, number> {
  const inThreads = new Map<string, number>();
  for (const slot of slots) {
    for (const job of [slot.job, ...slot.queued]) {
      if (job && job.group !== null) inThreads.set(job.group, (inThreads.get(job.group) ?? 0) + 1);
    }
  }
  return inThreads;
}

/**
 * A loaded thread chunking a short text, with room for another behind it (the one with the least
 * text ahead, if several). Only chunk jobs wait in a thread, and only behind texts of up to
 * QUEUE_BEHIND_MAX_CHARS in all: those take milliseconds, while an extraction or a long text may
 * take seconds, and another thread could come free first.
 */
export function slotToChunkNext(slots: Iterable<Slot>): Slot | null {
  let best: Slot | null = null;
  let least = QUEUE_BEHIND_MAX_CHARS + 1;
  for (const slot of slots) {
    const task = slot.job?.task;
    if (!slot.ready || slot.queued.length >= QUEUED_IN_THREAD_MAX || task?.type !== 'indexText') continue;
    let ahead = task.text.length;
    for (const queued of slot.queued) ahead += queued.task.type === 'indexText' ? queued.task.text.length : 0;
    if (ahead >= least) continue;
    best = slot;
    least = ahead;
  }
  return best;
}
