// What a format's folder provides to the rest of the pipeline: how detection recognises and
// checks its files (pipeline/extract/detect.ts, on the API's event loop, so only light code), and
// how a worker thread extracts its text (pipeline/extract/worker.ts, loaded there alone).
import type { FormatId } from '../../domain/formats.js';

/** The start of a stored file, read once by detection and shown to every format it asks. */
export interface Probe {
  /** The file's first bytes (64 KiB, or the whole file when shorter). */
  head: Buffer;
  /** The file is longer than `head`. */
  truncated: boolean;
  /** Where the whole file is, for checks that need more than its head (a ZIP's directory). */
  path: string;
}

export interface FormatHandler {
  /**
   * 'binary': the bytes alone tell the format (a signature). 'text': they do not tell it from the
   * other text formats, so a name or a declared media type must, and only binary content is refused.
   */
  readonly kind: 'binary' | 'text';
  /**
   * For a file without a usable extension: do the bytes show this format? Binary formats are asked
   * first, in registry order; text formats only when no signature was found and no media type was
   * declared. `declaredText`: a server declared one of the text formats.
   */
  sniff?(probe: Probe, hints: { declaredText: boolean }): boolean;
  /**
   * Null when the file is of this format as far as detection can tell, else why not, as the end
   * of "report.pdf is not a PDF (…)".
   */
  validate(probe: Probe): Promise<string | null>;
  /**
   * Its text comes from parts the file unpacks (a ZIP package's, an e-mail's attachments): text
   * past the bound relative to the file's size fails `archive_limits`, as the archive limits do,
   * rather than `too_large` (extract/text-limit.ts).
   */
  readonly unpacks?: boolean;
  /**
   * The format's extractor; imported on first call, so detection never loads a parser. `nested`
   * serves a format whose files hold other files (an e-mail's attachments).
   */
  loadExtractor(nested: NestedFiles): Promise<FormatExtractor>;
}

/**
 * How an extractor reads the files inside a file (an e-mail's attachments, a forwarded message):
 * which format each is and that format's extractor. The caller hands it over, so a format's own
 * module never imports the registry that lists it.
 */
export interface NestedFiles {
  /** The nested file's format as detection decides it, or null when docindex does not read it. */
  formatOf(file: {
    path: string;
    filename: string | null;
    declaredContentType: string | null;
  }): Promise<FormatId | null>;
  extractorOf(format: FormatId): Promise<FormatExtractor>;
}

/**
 * A format's text, extracted inside a worker thread. Throws ExtractionError for a bad file. `ocr`:
 * all of its text comes from OCR (an image, counted as one recognised page in `ocr_pages`).
 */
export type FormatExtractor =
  | {
      readonly paged: false;
      readonly ocr?: boolean;
      extractText(path: string): Promise<string>;
      /**
       * The same text as `extractText`, in pieces as the file is read (their join is exactly
       * `extractText`'s string), for formats that can be read so: the thread chunks them as they
       * come and never holds the whole text. Throws ExtractionError for a bad file, like
       * `extractText`, possibly after some pieces.
       */
      textPieces?(path: string): AsyncIterable<string>;
    }
  | { readonly paged: true; openPaged(path: string): Promise<PagedDocument> };

/** An opened paged document: its page count first, then the text of any range of its pages. */
export interface PagedDocument {
  readonly numPages: number;
  /** Text of pages `from`..`to` (1-based, inclusive), one string per page. */
  pageTexts(from: number, to: number): Promise<string[]>;
  /** Of the pages extracted so far: how many OCR read, and how many needed it while OCR was off. */
  ocrCounts?(): { recognised: number; skipped: number };
  /**
   * Lets go of what the reader keeps of the pages read so far (fonts, parsed pages): for a reader
   * going through a long document page by page. Later pages read as before, if a little slower.
   */
  release?(): Promise<void>;
  close(): Promise<void>;
}
