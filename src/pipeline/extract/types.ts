// The shapes extraction hands to the rest of the pipeline, and the messages the pool and its
// worker threads exchange. Kept apart from the code so the worker and the pool agree on one list.

import type { FormatId } from '../../domain/formats.js';
import type { SearchLanguage } from '../../domain/search-words.js';
import type { ChunkStream } from '../../domain/types.js';
import type { IndexPlan } from '../chunk/for-index.js';
import type { ChunkOptions } from '../chunk/options.js';
import type { OcrSettings } from '../ocr/engine.js';
import type { ExtractionCode } from './errors.js';
import type { TextLimitSettings } from './text-limit.js';

/** A format the pipeline extracts: one of domain/formats.ts's SUPPORTED_FORMATS. */
export type SourceFormat = FormatId;

/** Where one page's text sits in `ExtractedText.text`: 1-based page, UTF-16 offsets, end exclusive. */
export interface PageSpan {
  page: number;
  charStart: number;
  charEnd: number;
}

export interface ExtractedText {
  text: string;
  /** One span per page for paged formats (PDF), in page order; null otherwise. */
  pages: PageSpan[] | null;
  format: SourceFormat;
  contentType: string;
  /** Pages whose text OCR recognised (`ocr_pages`); null for formats that never need OCR. */
  ocrPages: number | null;
}

export interface PipelineThreadOptions {
  /** Worker threads in the pool; one big PDF may use several of them at once. */
  maxWorkers: number;
  /** Wall-time cap per document, counted from the moment a worker starts on it. */
  timeoutMs: number;
  /** V8 old-generation heap cap of each worker thread. */
  maxHeapMb: number;
  pdfMaxPages: number;
  /** OCR of scanned PDF pages and images (OCR, OCR_LANGUAGES); on with English when absent. */
  ocr?: OcrSettings;
  /** SEARCH_LANGUAGE: the language of documents that name none and cannot be told (default 'auto'). */
  searchLanguage?: SearchLanguage;
  /**
   * A paged file (PDF) at least this large is read and chunked by one thread, a page at a time,
   * instead of being split across threads and joined (default 16 MiB): memory over speed.
   */
  pagedStreamFromBytes?: number;
  /** The most characters of text one file may give, or it fails too_large (default DEFAULT_MAX_TEXT_CHARS). */
  maxTextChars?: number;
  /**
   * A thread that has had no work for this long is ended, and the next document starts a new one;
   * 0 or absent: threads live until the pool closes.
   */
  idleStopMs?: number;
  /** Characters of text per byte of the file, at most (default DEFAULT_MAX_TEXT_RATIO; text-limit.ts). */
  maxTextRatio?: number;
  /** Characters any file may give whatever its size (default DEFAULT_TEXT_FLOOR_CHARS). */
  textFloorChars?: number;
  /**
   * Ends of short texts a thread chunks back to back handed on together, up to `max` (default 1:
   * each at once; see finishRunFor), none held longer than `holdMs` (default 10).
   */
  finishRuns?: { max: number; holdMs?: number };
}

/**
 * 256 Mi characters: above what any file within the upload and archive limits holds, unless its
 * text is padding (a table of millions of empty cells).
 */
export const DEFAULT_MAX_TEXT_CHARS = 256 * 1024 * 1024;

/**
 * The pipeline's worker threads: they extract the text of stored files and chunk every text, so
 * neither parsing untrusted bytes nor tokenizing ever runs on the API's event loop.
 */
export interface PipelineThreads {
  extract(path: string, format: SourceFormat, signal?: AbortSignal): Promise<ExtractedText>;
  /** chunkForIndex in a thread: the chunks, their search words and the text's SHA-256. */
  chunk(text: string, options: ChunkOptions, signal?: AbortSignal): Promise<IndexPlan>;
  /**
   * DocumentPipeline.indexText: chunk, with the chunks handed on as the thread reports them (never
   * all held at once). `group` (here and in indexFile): documents waiting for a thread take turns
   * between groups (orgs), the group with the fewest in threads first; without one, a document
   * waits its turn.
   */
  indexText(text: string, options: ChunkOptions, signal?: AbortSignal, group?: string): ChunkStream;
  /**
   * DocumentPipeline.indexFile: extract, then chunk, with the chunks handed on as they come. The
   * text stays in the thread that extracted it, which chunks it too (a PDF's pages, extracted by
   * several threads, are joined first): a text of many megabytes never crosses the event loop.
   */
  indexFile(
    path: string,
    format: SourceFormat,
    options: FileChunkOptions,
    signal?: AbortSignal,
    group?: string,
  ): ChunkStream;
  /**
   * Starts a thread now, if none runs, so the first document does not wait for one to load its
   * modules and the tokenizer's tables. Resolves once a thread has them (or could not start).
   */
  warm(): Promise<void>;
  /** Rejects documents still queued or running and stops every worker thread. */
  close(): Promise<void>;
}

/** How to chunk a file's text; its pages, if any, come from extraction. */
export type FileChunkOptions = Omit<ChunkOptions, 'pages'>;

/** Pool → worker. */
/** The environment variable a pipeline process finds its WorkerData in (JSON). */
export const WORKER_DATA_ENV = 'DOCINDEX_PIPELINE_WORKER_DATA';

/** What each thread or process is started with. */
export interface WorkerData {
  searchLanguage: SearchLanguage;
  ocr: OcrSettings;
  text: TextLimitSettings;
}

export type WorkerRequest =
  /** A file's text, returned whole (`text`) or, for a paged file, a range of pages at a time. */
  | {
      type: 'extract';
      jobId: number;
      path: string;
      format: SourceFormat;
      pdfMaxPages: number;
      /**
       * Set when this worker helps with part of a PDF another worker opened first; the worker then
       * extracts exactly these pages and never reports a page count.
       */
      pdfPart?: { from: number; to: number };
    }
  /**
   * indexFile: the file's text chunked in the thread that reads it. The worker answers with chunk
   * spans that carry their text, then `chunks`. A paged file (PDF) is read page by page by this
   * worker alone, never split across workers.
   */
  | {
      type: 'indexFile';
      jobId: number;
      path: string;
      format: SourceFormat;
      pdfMaxPages: number;
      options: FileChunkOptions;
    }
  /** The pages (1-based, inclusive) the worker that reported the page count should extract. */
  | { type: 'pdfPlan'; jobId: number; from: number; to: number }
  /** indexText: the spans of the text's chunks (without their text, which the caller has), then `chunks`. */
  | { type: 'indexText'; jobId: number; text: string; options: ChunkOptions }
  /** A `chunkSpans` message of the job has been passed on to its reader: the thread may send one more. */
  | { type: 'spansRead'; jobId: number }
  /** The thread ends itself, between two of its tasks (see the pool's `endThread`). */
  | { type: 'exit' };

/**
 * One chunk as a thread reports it. Its text is left out when the caller sent the text (it has it
 * already), and included when the thread extracted the text itself.
 */
export interface ChunkSpan {
  charStart: number;
  charEnd: number;
  tokenCount: number;
  pageStart: number | null;
  pageEnd: number | null;
  words: string;
  text?: string;
}

/** Worker → pool. */
export type WorkerReply =
  | { type: 'ready' }
  /** The chunker is loaded and has run once: its tables are built (see warm()). */
  | { type: 'warmed' }
  /**
   * The thread loads its extractors before it reads the job (its first file), then says `loaded`:
   * the job's time cap does not run in between.
   */
  | { type: 'loading'; jobId: number }
  | { type: 'loaded'; jobId: number }
  | { type: 'pageCount'; jobId: number; numPages: number }
  /** `ocrPages`: of these pages, how many OCR read; `ocrSkipped`: how many needed it while it was off. */
  | { type: 'pageTexts'; jobId: number; from: number; texts: string[]; ocrPages: number; ocrSkipped: number }
  | { type: 'text'; jobId: number; text: string; ocrPages: number | null }
  | { type: 'failed'; jobId: number; code: ExtractionCode; message: string }
  /**
   * The next chunks of the text, in order; sent in messages of a bounded size, so the event loop
   * never decodes one huge message.
   */
  | { type: 'chunkSpans'; jobId: number; spans: ChunkSpan[] }
  /** The chunking is done: every span has been sent. */
  | {
      type: 'chunks';
      jobId: number;
      tokenCount: number;
      contentSha256: string;
      language: string | null;
      ocrPages: number | null;
    }
  /** Something went wrong that is not the input's fault (a bug): the caller retries. */
  | { type: 'error'; jobId: number; message: string };
