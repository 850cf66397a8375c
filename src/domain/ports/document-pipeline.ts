// The document pipeline: what ingest and the worker ask of pipeline/.
import type { FormatId } from '../formats.js';
import type { ChunkStream } from '../types.js';

/** An upload's format as its bytes and name tell it: a media type, or why it is refused. */
export type SniffedFormat = { ok: true; contentType: string } | { ok: false; detail: string };

/** A URL submitted for download: how it may be shown (no query string), or why it is refused. */
export type ScreenedUrl = { ok: true; displayUrl: string } | { ok: false; reason: string };

/** A URL's bytes, downloaded into the blob store, and what was learnt of them. */
export interface DownloadedUrl {
  blobKey: string;
  bytes: number;
  contentType: string;
}

/** How a document's text is cut into chunks; a paged file's pages come from its extraction. */
export interface IndexOptions {
  chunkSize: number;
  chunkOverlap: number;
  /** Markdown headings start new chunks. */
  markdown?: boolean;
  /** The document's language as given at ingest (the analysis of its words); null: detected. */
  language?: string | null;
}

/**
 * The document pipeline (pipeline/) as the services see it. Ingest asks it what an upload is and
 * whether a URL may be fetched (on the API's event loop, no parser loaded); the worker's
 * processor asks it to download a URL and to turn a stored file or a text into chunks, which
 * its worker threads make. Each operation has this one name from the caller to the thread.
 */
export interface DocumentPipeline {
  /** An upload's format, from its first bytes and its name. */
  sniffFormat(file: { path: string; filename: string | null }): Promise<SniffedFormat>;
  /** Whether a submitted URL may be fetched at all (its address is checked again on connect). */
  screenUrl(raw: string): ScreenedUrl;
  /**
   * A URL's bytes into the blob store, with its format checked from them; fails with the
   * document's failure code (a PipelineError).
   */
  downloadUrl(url: string, signal: AbortSignal): Promise<DownloadedUrl>;
  /**
   * A stored file's text extracted and chunked, with each chunk's search words and the text's
   * SHA-256; the text stays in the thread that read it. `orgId` (here and in indexText): waiting
   * documents take turns between orgs.
   */
  indexFile(
    path: string,
    format: FormatId,
    options: IndexOptions,
    signal: AbortSignal,
    orgId: string,
  ): ChunkStream;
  /** A text chunked, with each chunk's search words and the text's SHA-256. */
  indexText(text: string, options: IndexOptions, signal: AbortSignal, orgId: string): ChunkStream;
}
