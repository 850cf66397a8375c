// A paged document's text (a PDF's, a TIFF's): its pages joined by a blank line, each page's span
// in the joined text, and the failure a document of scans without a word of text gets. The pool
// joins the pages several threads extracted (assemblePages); a thread that chunks a large PDF as
// it reads it joins them a page at a time (PageJoiner), into the same text and spans.
import { contentTypeOf } from '../../domain/formats.js';
import { ExtractionError } from './errors.js';
import type { ExtractedText, PageSpan, SourceFormat } from './types.js';

/** Pages joined by a blank line; an empty page gets an empty span and adds no separator. */
export class PageJoiner {
  /** Each page's span so far; a chunker may read it while more pages are added. */
  readonly pages: PageSpan[] = [];
  private offset = 0;
  private started = false;
  /** Whether any page had more than white space. */
  hasText = false;

  /** The next page's text; returns what to append to the joined text ('' for an empty page). */
  add(text: string): string {
    const page = this.pages.length + 1;
    if (text === '') {
      this.pages.push({ page, charStart: this.offset, charEnd: this.offset });
      return '';
    }
    const separator = this.started ? '\n\n' : '';
    this.offset += separator.length;
    this.pages.push({ page, charStart: this.offset, charEnd: this.offset + text.length });
    this.offset += text.length;
    this.started = true;
    if (!this.hasText && text.trim() !== '') this.hasText = true;
    return separator + text;
  }
}

/** The pages of each part (keyed by its first page), joined in page order. */
export function assemblePages(
  parts: Map<number, string[]>,
  format: SourceFormat,
  ocrPages: number | null = null,
): ExtractedText {
  const joiner = new PageJoiner();
  const pieces: string[] = [];
  for (const [, texts] of [...parts.entries()].sort((a, b) => a[0] - b[0])) {
    for (const text of texts) pieces.push(joiner.add(text));
  }
  return {
    text: pieces.join(''),
    pages: joiner.pages,
    format,
    contentType: contentTypeOf(format),
    ocrPages,
  };
}

/**
 * A paged document without a word of text, some of whose pages are scans: the honest outcome is a
 * failure that says why, not a `ready` document that no query can ever find.
 */
export function unreadScan(
  hasText: boolean,
  ocr: { recognised: number; skipped: number },
  name: string,
): ExtractionError | null {
  if (hasText) return null;
  if (ocr.skipped > 0) {
    return new ExtractionError(
      'no_text',
      `the ${name} has no text layer on ${ocr.skipped} of its pages, and OCR, which could read them, is off (OCR=off)`,
    );
  }
  if (ocr.recognised > 0) {
    return new ExtractionError(
      'no_text',
      `OCR found no text on the ${name}'s ${ocr.recognised} scanned pages`,
    );
  }
  return null;
}
