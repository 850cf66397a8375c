// Entry point of a pipeline worker, run as a thread or as a child process (hosts.ts). It takes one
// document (or one page range of a PDF) at a time from the pool in pool.ts and answers with text,
// chunks or a failure code. Everything that parses untrusted bytes runs here, under the heap cap
// and wall-time cap the pool enforces.
import { stat } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { parentPort, workerData as threadData } from 'node:worker_threads';
import { FORMAT_IDS, type FormatId, formatSpec } from '../../domain/formats.js';
import type { IndexPiece } from '../chunk/for-index.js';
import type { FormatExtractor } from '../formats/handler.js';
import { FORMAT_HANDLERS } from '../formats/handlers.js';
import { configureOcr } from '../ocr/engine.js';
import { ExtractionError } from './errors.js';
import { nestedFiles } from './nested-files.js';
import { PageJoiner, unreadScan } from './pages.js';
import { type TextLimit, textLimitOf } from './text-limit.js';
import {
  type ChunkSpan,
  WORKER_DATA_ENV,
  type WorkerData,
  type WorkerReply,
  type WorkerRequest,
} from './types.js';

/** The pool: this thread's parent port, or this process's IPC channel. */
const port = parentLink();
const workerData = port.data;
const configuredLanguage = workerData.searchLanguage;
configureOcr(workerData.ocr);

function parentLink(): {
  data: WorkerData;
  send: (reply: WorkerReply) => void;
  onRequest: (listener: (request: WorkerRequest) => void) => void;
} {
  if (parentPort) {
    const thread = parentPort;
    return {
      data: threadData as WorkerData,
      send: (reply) => thread.postMessage(reply),
      onRequest: (listener) => thread.on('message', listener),
    };
  }
  const data = process.env[WORKER_DATA_ENV];
  if (!process.send || data === undefined) {
    throw new Error('worker.ts runs only as a pipeline thread or process (see hosts.ts)');
  }
  // The pool is gone (it crashed or was killed): nothing is left to work for.
  process.on('disconnect', () => process.exit(0));
  return {
    data: JSON.parse(data) as WorkerData,
    send: (reply) => {
      if (process.connected) process.send!(reply);
    },
    onRequest: (listener) => process.on('message', listener as (message: unknown) => void),
  };
}

/**
 * This thread (in a pipeline process, its main thread) runs at a lower CPU priority than the
 * server's event loop: on Linux a priority set from a thread is that thread's own. When extraction
 * and chunking keep every core busy, the thread answering API requests is then scheduled first
 * (bench/neighbour.bench.ts). Where the system refuses, the thread simply keeps its priority.
 */
const THREAD_NICENESS = 10;
try {
  setPriority(THREAD_NICENESS);
} catch {
  // Not permitted or not supported here: the same priority as the API, as before.
}

/**
 * Every format's extractor, imported when this thread is first given a file: a thread that only
 * chunks texts never loads a parser, so it starts in a fraction of the time and memory. All of
 * them at once, so that a file meets the same heap in any thread whichever files came before it
 * (the heap cap is judged against it). The pool stops that file's time cap while they load (the
 * `loading` and `loaded` replies), as it does not count the thread's own start either.
 * pdf.js is loaded by the PDF extractor with the first PDF (see schedulePreload).
 */
let extractors: Promise<ReadonlyMap<FormatId, FormatExtractor>> | null = null;

async function extractorFor(format: FormatId, jobId: number): Promise<FormatExtractor | null> {
  if (extractors) return (await extractors).get(format) ?? null;
  reply({ type: 'loading', jobId });
  const loading = Promise.all(
    FORMAT_IDS.map(async (id) => [id, await nestedFiles.extractorOf(id)] as const),
  ).then((loaded) => new Map(loaded));
  extractors = loading;
  try {
    return (await loading).get(format) ?? null;
  } catch (error) {
    // Not kept: the next file asks the module loader again.
    extractors = null;
    throw error;
  } finally {
    reply({ type: 'loaded', jobId });
  }
}

type ExtractRequest = Extract<WorkerRequest, { type: 'extract' }>;
type IndexFileRequest = Extract<WorkerRequest, { type: 'indexFile' }>;
type IndexTextRequest = Extract<WorkerRequest, { type: 'indexText' }>;

/** Resolvers of PDFs that reported their page count and wait to be told which pages are theirs. */
const awaitingPlan = new Map<number, (range: { from: number; to: number }) => void>();
let busy = false;
let preload: NodeJS.Timeout | undefined;
/** The chunker loading ahead of any document (schedulePreload), while it does. */
let preloading: Promise<void> | null = null;
/**
 * The chunker loads its token table (a few hundred ms) on first use, or ahead of it when idle.
 * Once loaded it runs once on a short text, so the encoder's vocabulary and the configured
 * language's analysis are built too, and the pool is told (warm() waits for it): the first
 * document costs what the hundredth does.
 */
let chunker: Promise<typeof import('../chunk/for-index.js')> | null = null;
const loadChunker = () => {
  chunker ??= import('../chunk/for-index.js').then((loaded) => {
    loaded.chunkForIndex(
      'Warming up: the first document after a start is chunked as fast as any other.',
      { chunkSize: 128, chunkOverlap: 0 },
      { given: null, configured: configuredLanguage },
    );
    reply({ type: 'warmed' });
    return loaded;
  });
  return chunker;
};

function reply(message: WorkerReply): void {
  port.send(message);
}

/**
 * A document that came while the chunker was loading ahead waits for it with its clock stopped,
 * as it does for the parsers: the load ends in a few hundred ms of work that nothing interrupts.
 */
async function afterPreload(jobId: number): Promise<void> {
  if (!preloading) return;
  reply({ type: 'loading', jobId });
  try {
    await preloading;
  } finally {
    reply({ type: 'loaded', jobId });
  }
}

/**
 * `chunkSpans` messages of the current job the pool has not yet passed on to their reader. The
 * thread stops sending at MAX_UNREAD_SPANS until the reader catches up: were it to send all of a
 * large text's chunks at once, they would wait in memory, and the event loop would decode the
 * whole pile in one go when it next looked, holding up every request meanwhile.
 */
const MAX_UNREAD_SPANS = 4;
const unread = { jobId: -1, count: 0, wake: null as (() => void) | null };
/** One document at a time: a text queued in the thread waits until the one before it is done. */
let work: Promise<void> = Promise.resolve();

port.onRequest((request) => {
  clearTimeout(preload);
  switch (request.type) {
    case 'pdfPlan':
      awaitingPlan.get(request.jobId)?.({ from: request.from, to: request.to });
      awaitingPlan.delete(request.jobId);
      return;
    case 'spansRead':
      if (request.jobId !== unread.jobId) return;
      unread.count--;
      unread.wake?.();
      unread.wake = null;
      return;
    case 'indexText':
      work = work.then(() => indexText(request));
      return;
    case 'exit':
      // process.exit in a thread ends that thread only, and here, between two tasks, no zlib
      // stream is half set up (see ThreadHost.end in hosts.ts).
      process.exit(0);
      return;
    default:
      work = work.then(() => extractOrIndexFile(request));
  }
});

/** Sends a message of spans once fewer than MAX_UNREAD_SPANS of the job's are unread. */
async function sendSpans(jobId: number, spans: ChunkSpan[]): Promise<void> {
  if (unread.jobId !== jobId) {
    unread.jobId = jobId;
    unread.count = 0;
  }
  while (unread.count >= MAX_UNREAD_SPANS) {
    await new Promise<void>((resolve) => {
      unread.wake = resolve;
    });
  }
  unread.count++;
  reply({ type: 'chunkSpans', jobId, spans });
}

/**
 * Characters of chunk text and words per `chunkSpans` message: decoding one such message takes the
 * event loop about a millisecond, where one message with every chunk of an 84 MB text took it
 * hundreds (bench/neighbour.bench.ts).
 */
const SPANS_MESSAGE_CHARS = 256 * 1024;

/**
 * The text to chunk could not be read (its file is bad): thrown through the chunker so that it is
 * reported as the input's failure, not as a fault of ours.
 */
class SourceError extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

/**
 * A file's text as it is read, for the chunker: its failures tagged as the input's, and cut off
 * past the file's text bound (text-limit.ts).
 */
async function* fromFile(pieces: AsyncIterable<string>, limit: TextLimit): AsyncGenerator<string> {
  try {
    let chars = 0;
    for await (const piece of pieces) {
      chars += piece.length;
      limit.check(chars);
      yield piece;
    }
  } catch (error) {
    throw new SourceError(error);
  }
}

/** The bound on the text of the file at `path` (its size, its format, the settings). */
async function textLimitFor(path: string, format: FormatId): Promise<TextLimit> {
  const { size } = await stat(path);
  return textLimitOf(size, workerData.text, FORMAT_HANDLERS[format].unpacks === true);
}

/**
 * Chunks the text as its pieces come and sends the chunks back a bounded message at a time, then
 * the totals. The chunker holds a window of the text, never all of it; with a text's reader that
 * stops reading (MAX_UNREAD_SPANS), the thread stops reading its file too. With `withText` each
 * span carries its text (the caller does not have the text).
 */
async function indexPieces(
  jobId: number,
  pieces: Iterable<string> | AsyncIterable<string>,
  options: IndexTextRequest['options'],
  withText: boolean,
  ocrPages: OcrPages = null,
): Promise<void> {
  const { IndexChunker } = await loadChunker();
  const chunker = new IndexChunker(options, {
    given: options.language ?? null,
    configured: configuredLanguage,
  });
  let spans: ChunkSpan[] = [];
  let size = 0;
  const take = async (chunks: Iterable<IndexPiece>) => {
    for (const c of chunks) {
      spans.push({
        charStart: c.charStart,
        charEnd: c.charEnd,
        tokenCount: c.tokenCount,
        pageStart: c.pageStart,
        pageEnd: c.pageEnd,
        words: c.words,
        ...(withText ? { text: c.text } : {}),
      });
      size += c.words.length + (withText ? c.text.length : 0);
      if (size >= SPANS_MESSAGE_CHARS) {
        const full = spans;
        spans = [];
        size = 0;
        await sendSpans(jobId, full);
      }
    }
  };
  for await (const piece of pieces) await take(chunker.push(piece));
  await take(chunker.end());
  if (spans.length > 0) await sendSpans(jobId, spans);
  const { tokenCount, contentSha256, language } = chunker.totals();
  reply({
    type: 'chunks',
    jobId,
    tokenCount,
    contentSha256,
    language,
    ocrPages: typeof ocrPages === 'function' ? ocrPages() : ocrPages,
  });
}

/** Pages OCR read: known at the start (an image: 1), or once every page is read (a PDF). */
type OcrPages = number | null | (() => number | null);

/** indexPieces; a failure is reported as ours (`error`, retried), not as the input's. */
async function indexOrReportError(
  jobId: number,
  pieces: Iterable<string> | AsyncIterable<string>,
  options: IndexTextRequest['options'],
  withText: boolean,
  ocrPages: OcrPages = null,
): Promise<void> {
  try {
    await indexPieces(jobId, pieces, options, withText, ocrPages);
  } catch (error) {
    // The file turned out bad half-way: the caller's catch reports it as the input's failure.
    if (error instanceof SourceError) throw error.reason;
    reply({ type: 'error', jobId, message: error instanceof Error ? error.message : String(error) });
  }
}

async function indexText(request: IndexTextRequest): Promise<void> {
  busy = true;
  try {
    await afterPreload(request.jobId);
    await indexOrReportError(request.jobId, [request.text], request.options, false);
  } finally {
    busy = false;
    schedulePreload();
  }
}

/** A file's text (`extract`), or its chunks (`indexFile`). */
async function extractOrIndexFile(request: ExtractRequest | IndexFileRequest): Promise<void> {
  const { jobId } = request;
  const index = request.type === 'indexFile' ? request.options : null;
  busy = true;
  try {
    await afterPreload(jobId);
    let extractor: FormatExtractor | null;
    try {
      extractor = await extractorFor(request.format, jobId);
    } catch (error) {
      // Our module did not load, which is no fault of the file's: an error, which the caller retries.
      const reason = error instanceof Error ? error.message : String(error);
      reply({ type: 'error', jobId, message: `the ${request.format} extractor did not load (${reason})` });
      return;
    }
    if (!extractor) {
      throw new ExtractionError(
        'unsupported_format',
        `cannot extract text from format ${String(request.format)}`,
      );
    }
    if (extractor.paged) {
      if (request.type === 'indexFile') await indexPages(request, extractor);
      else await extractPages(request, extractor);
      return;
    }
    // An image is one page, and OCR read it (else extraction failed).
    const ocrPages = extractor.ocr ? 1 : null;
    const limit = await textLimitFor(request.path, request.format);
    if (index && extractor.textPieces) {
      // Read, decoded and chunked a piece at a time: a 100 MB file is never one string here.
      const pieces = fromFile(extractor.textPieces(request.path), limit);
      await indexOrReportError(jobId, pieces, index, true, ocrPages);
      return;
    }
    const text = await extractor.extractText(request.path);
    limit.check(text.length);
    if (index) await indexOrReportError(jobId, [text], index, true, ocrPages);
    else reply({ type: 'text', jobId, text, ocrPages });
  } catch (error) {
    if (error instanceof ExtractionError) {
      reply({ type: 'failed', jobId, code: error.code, message: error.message });
    } else {
      // A parser choking on input it does not expect is a property of the input.
      const reason = error instanceof Error ? error.message : String(error);
      reply({
        type: 'failed',
        jobId,
        code: 'corrupt',
        message: `the ${request.format} file cannot be read (${reason})`,
      });
    }
  } finally {
    busy = false;
    schedulePreload();
  }
}

/**
 * A paged file (a PDF): the thread that opens it first reports its page count and is told which
 * pages are its own; helper threads are sent their range with the request.
 */
async function extractPages(
  request: ExtractRequest,
  extractor: Extract<FormatExtractor, { paged: true }>,
): Promise<void> {
  const { jobId } = request;
  const { name } = formatSpec(request.format);
  const doc = await extractor.openPaged(request.path);
  try {
    let range = request.pdfPart;
    if (!range) {
      checkPageCount(doc.numPages, request, name);
      const plan = new Promise<{ from: number; to: number }>((resolve) => awaitingPlan.set(jobId, resolve));
      reply({ type: 'pageCount', jobId, numPages: doc.numPages });
      range = await plan;
    } else if (range.to > doc.numPages) {
      throw new ExtractionError('corrupt', `the ${name} has ${doc.numPages} pages, not ${range.to}`);
    }
    const texts = await doc.pageTexts(range.from, range.to);
    // This thread's share of the pages alone may cross the file's bound; the pool checks the whole.
    const limit = await textLimitFor(request.path, request.format);
    limit.check(texts.reduce((chars, text) => chars + text.length, 0));
    const ocr = doc.ocrCounts?.() ?? { recognised: 0, skipped: 0 };
    reply({
      type: 'pageTexts',
      jobId,
      from: range.from,
      texts,
      ocrPages: ocr.recognised,
      ocrSkipped: ocr.skipped,
    });
  } finally {
    await doc.close().catch(() => {});
  }
}

/** Checked before a single page is read: a 100,000-page PDF costs one parse of its page tree. */
function checkPageCount(numPages: number, request: ExtractRequest | IndexFileRequest, name: string): void {
  if (numPages > request.pdfMaxPages) {
    throw new ExtractionError(
      'too_large',
      `the ${name} has ${numPages} pages; at most ${request.pdfMaxPages} are allowed`,
    );
  }
}

/**
 * Pages read between two releases of the reader's caches in indexPages: releasing more often
 * lowers the server's peak for a large PDF (bench/RESULTS.md, section 7) but costs the fonts'
 * parsing again, so the pool's split path, for smaller PDFs, never does it.
 */
const RELEASE_EVERY_PAGES = 20;

/**
 * A paged file chunked in this thread as its pages are read, one page at a time (the pool sends
 * large PDFs here rather than splitting them across threads): neither its text nor its pages'
 * texts are ever held whole, and the chunks and spans are those of the pages joined.
 */
async function indexPages(
  request: IndexFileRequest,
  extractor: Extract<FormatExtractor, { paged: true }>,
): Promise<void> {
  const { name } = formatSpec(request.format);
  const doc = await extractor.openPaged(request.path);
  try {
    checkPageCount(doc.numPages, request, name);
    const joiner = new PageJoiner();
    const ocr = () => doc.ocrCounts?.() ?? { recognised: 0, skipped: 0 };
    const pieces = async function* () {
      for (let page = 1; page <= doc.numPages; page++) {
        if (page % RELEASE_EVERY_PAGES === 0) await doc.release?.();
        const [text = ''] = await doc.pageTexts(page, page);
        const piece = joiner.add(text);
        if (piece !== '') yield piece;
      }
      const empty = unreadScan(joiner.hasText, ocr(), name);
      if (empty) throw empty;
    };
    // The chunker reads the spans of pages added so far: a page's span is in before its text.
    await indexOrReportError(
      request.jobId,
      fromFile(pieces(), await textLimitFor(request.path, request.format)),
      { ...request.options, pages: joiner.pages },
      true,
      () => ocr().recognised,
    );
  } finally {
    await doc.close().catch(() => {});
  }
}

/**
 * The chunker's token table takes a few hundred milliseconds to load and every document needs it,
 * so an idle thread loads it ahead of the first one. Only when idle: loading blocks the thread,
 * and a document that arrived meanwhile would spend its time budget waiting. pdf.js is loaded by
 * the first PDF instead: loading it ahead would block the thread as long again, and chunk jobs
 * arriving meanwhile (most of the work) would wait for a PDF that may never come.
 */
function schedulePreload(): void {
  if (chunker) return;
  clearTimeout(preload);
  preload = setTimeout(() => {
    if (busy) return;
    preloading = loadChunker()
      .then(() => {})
      .catch(() => {
        chunker = null;
      })
      .finally(() => {
        preloading = null;
      });
  }, 50);
  // Never the reason the thread stays alive.
  preload.unref();
}

reply({ type: 'ready' });
schedulePreload();
